import { backoffDelayMs, failureVerdict, type BackoffOptions } from '@engram/core';
import type { EachBatchPayload } from 'kafkajs';

export interface RetryHooks {
  /** False once the consumer stops or loses the partition: give up without committing. */
  shouldContinue(): boolean;
  /** Keeps group membership alive while we wait. */
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
 * partition its group membership.
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

/**
 * Retry hooks for one partition batch: the first retry pauses the partition (no more fetches for
 * it while we wait), `resume()` undoes that once the batch is settled.
 */
export class PausingRetryHooks implements RetryHooks {
  private resumePartition?: () => void;

  constructor(
    private readonly payload: EachBatchPayload,
    private readonly report: (error: unknown, attempt: number, delayMs: number) => void,
  ) {}

  shouldContinue(): boolean {
    return this.payload.isRunning() && !this.payload.isStale();
  }

  heartbeat(): Promise<void> {
    return this.payload.heartbeat();
  }

  onRetry(error: unknown, attempt: number, delayMs: number): void {
    this.resumePartition ??= this.payload.pause();
    this.report(error, attempt, delayMs);
  }

  resume(): void {
    this.resumePartition?.();
    this.resumePartition = undefined;
  }
}
