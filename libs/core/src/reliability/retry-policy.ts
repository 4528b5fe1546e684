import { EngramError, isProgrammerError } from '../errors/engram-error';

export interface BackoffOptions {
  initialMs: number;
  maxMs: number;
}

/**
 * Exponential backoff with "full jitter" (a random delay up to the exponential bound), so many
 * paused partitions do not hammer a recovering server in lockstep.
 */
export function backoffDelayMs(
  attempt: number,
  { initialMs, maxMs }: BackoffOptions,
  random: () => number = Math.random,
): number {
  const bound = Math.min(maxMs, initialMs * 2 ** Math.max(0, attempt));
  return Math.max(initialMs, Math.round(bound * random()));
}

export type FailureVerdict = 'retry' | 'dead-letter';

/**
 * What a consumer does with a failure. Classified retriable errors (outages) are retried for as
 * long as it takes — skipping would lose data. Programmer and non-retriable errors go to the DLQ at
 * once. Unclassified errors get a bounded number of retries, then the DLQ, so one bad message
 * can never stall a partition for ever.
 */
export function failureVerdict(
  error: unknown,
  attempt: number,
  maxUnclassifiedAttempts: number,
): FailureVerdict {
  if (error instanceof EngramError) return error.retriable ? 'retry' : 'dead-letter';
  if (isProgrammerError(error)) return 'dead-letter';
  return attempt + 1 < maxUnclassifiedAttempts ? 'retry' : 'dead-letter';
}
