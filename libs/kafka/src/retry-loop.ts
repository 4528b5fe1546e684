import type { RetryHooks } from '@engram/core';
import type { EachBatchPayload } from 'kafkajs';

// The retry loop itself is transport-neutral and lives in libs/core; re-exported for existing imports.
export { retryUntilSettled, type Attempt, type RetryHooks } from '@engram/core';

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
