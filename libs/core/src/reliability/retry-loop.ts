import { backoffDelayMs, failureVerdict, type BackoffOptions } from './retry-policy';

export interface RetryHooks {
  /** False once the consumer stops or loses the partition: give up without committing. */
  shouldContinue(): boolean;
  /** Keeps group membership alive while we wait (a no-op where there is no group). */
  heartbeat(): Promise<void>;
  onRetry(error: unknown, attempt: number, delayMs: number): void;
}

export type Attempt<T> =
  { kind: 'done'; value: T } | { kind: 'dead-letter'; error: unknown } | { kind: 'stopped' };

const HEARTBEAT_SLICE_MS = 2_000;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Runs `work` until it succeeds, fails for good (dead-letter) or the consumer stops. Retriable
 * failures back off with jitter, heartbeating in slices so a long outage does not cost the
 * partition its group membership. Transport-neutral: the Kafka and the embedded processors share it.
 */
export async function retryUntilSettled<T>(
  work: () => Promise<T>,
  hooks: RetryHooks,
  backoff: BackoffOptions,
  maxUnclassifiedAttempts: number,
): Promise<Attempt<T>> {
  for (let attempt = 0; ; attempt++) {
    if (!hooks.shouldContinue()) return { kind: 'stopped' };
    try {
      return { kind: 'done', value: await work() };
    } catch (error) {
      if (failureVerdict(error, attempt, maxUnclassifiedAttempts) === 'dead-letter') {
        return { kind: 'dead-letter', error };
      }
      const delay = backoffDelayMs(attempt, backoff);
      hooks.onRetry(error, attempt, delay);
      for (let waited = 0; waited < delay && hooks.shouldContinue(); waited += HEARTBEAT_SLICE_MS) {
        await sleep(Math.min(HEARTBEAT_SLICE_MS, delay - waited));
        await hooks.heartbeat();
      }
    }
  }
}
