import {
  AccessBatcher,
  errorMessage,
  type AccessConfig,
  type AccessHit,
  type AccessUpdate,
} from '@engram/core';
import { Logger } from '@nestjs/common';

/** Writes one batch; returns the updates that could not be applied now (they are requeued). */
export type AccessWrite = (updates: AccessUpdate[]) => Promise<{ failed: AccessUpdate[] }>;

export interface AccessTrackerCounters {
  /** Distinct memory updates written (one update may carry several accesses). */
  written: number;
  batches: number;
  /** Updates put back after a failed write. */
  requeued: number;
}

/**
 * Access tracking for recall (SPEC §7): a recall hands its memories over and returns at once;
 * the core's AccessBatcher coalesces them per memory, and this class writes them in the
 * background when the batch is full or old enough. One write at a time; a failed write is
 * requeued (merged with newer accesses), so an outage delays the counts but loses none.
 */
export class AccessTracker {
  readonly counters: AccessTrackerCounters = { written: 0, batches: 0, requeued: 0 };
  private readonly batcher: AccessBatcher;
  private readonly logger = new Logger(AccessTracker.name);
  private readonly timer: NodeJS.Timeout;
  private inFlight: Promise<void> | null = null;

  constructor(
    private readonly write: AccessWrite,
    private readonly options: AccessConfig,
    private readonly clock: () => number = Date.now,
  ) {
    this.batcher = new AccessBatcher(options);
    // Checks twice per max age so nothing waits much longer than maxAgeMs; unref: a pending
    // access never keeps a CLI process alive (close() flushes it instead).
    this.timer = setInterval(() => this.flushDue(), Math.max(50, options.maxAgeMs / 2));
    this.timer.unref();
  }

  /** Records one recall's memories; never waits for a write. */
  record(hits: readonly AccessHit[]): void {
    if (hits.length === 0) return;
    this.batcher.record(hits, this.clock());
    this.flushDue();
  }

  get pending(): number {
    return this.batcher.size;
  }

  /** Writes everything waiting now (and waits for it); used at shutdown and by tests. */
  async flush(): Promise<void> {
    while (this.inFlight) await this.inFlight;
    if (this.batcher.size === 0) return;
    await this.run(this.batcher.drain());
  }

  /** Stops the timer and writes what is left. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }

  private flushDue(): void {
    if (this.inFlight) return;
    const due = this.batcher.takeDue(this.clock());
    if (due.length > 0) void this.run(due);
  }

  private run(updates: AccessUpdate[]): Promise<void> {
    const running = this.writeBatch(updates).finally(() => {
      this.inFlight = null;
    });
    this.inFlight = running;
    return running;
  }

  private async writeBatch(updates: AccessUpdate[]): Promise<void> {
    let failed: AccessUpdate[];
    try {
      failed = (await this.write(updates)).failed;
    } catch (error) {
      this.logger.warn(`access counts not written yet (${errorMessage(error)}); will retry`);
      failed = updates;
    }
    this.counters.batches += 1;
    this.counters.written += updates.length - failed.length;
    if (failed.length > 0) {
      this.counters.requeued += failed.length;
      this.batcher.requeue(failed);
    }
  }
}
