import { CommittedChangelog } from '@engram/core';
import type { Delivered } from '@engram/core';
import type { Logger } from '@nestjs/common';
import { decodeRecord, type ObserverRecord } from './observer-records';
import type { ObserverStageOptions, ToolCallPositions } from './observer-stage-options';
import type { EndedIndexEntry, SessionIndexEntry, Work } from './observer-work';

/**
 * What the observer has committed, in memory: the changelog's records of the owned partitions
 * (as bytes), an index of their sessions and ended sessions, how far each tool-calls partition is
 * consumed, and each input partition's event time (its watermark).
 */
export class ObserverCommittedState {
  readonly committedRecords: CommittedChangelog<ObserverRecord>;
  readonly index = new Map<string, SessionIndexEntry>();
  /** Ended sessions whose event ids are still kept (changelog key `ended:<sessionId>`). */
  readonly endedIndex = new Map<string, EndedIndexEntry>();
  owned = new Set<number>();
  readonly toolCallsConsumed = new Map<number, number>();
  /** The latest event time seen: idle sessions are timed by the stream, so a replay agrees. */
  /**
   * Per input partition, the latest event time consumed from each input topic: the parts of
   * the partition's watermark (see `watermark`).
   */
  readonly consumedTimes = {
    toolCalls: new Map<number, number>(),
    lifecycle: new Map<number, number>(),
  };

  constructor(
    restore: ObserverStageOptions['restore'],
    private readonly positions: ToolCallPositions,
    logger: Logger,
  ) {
    this.committedRecords = new CommittedChangelog({
      restore,
      decode: decodeRecord,
      onUnreadable: (key, error) =>
        logger.error(`unreadable changelog record ${key} skipped: ${String(error)}`),
    });
  }

  /** After a rebalance: forget partitions no longer owned; new ones restore on first use. */
  onAssignment(partitions: readonly number[]): void {
    this.owned = new Set(partitions);
    for (const partition of this.committedRecords.partitions) {
      if (!this.owned.has(partition)) this.forgetPartition(partition);
    }
  }

  noteConsumedTimes(
    times: Map<number, number>,
    items: ReadonlyArray<Delivered<{ timestamp: number }>>,
  ): void {
    for (const { partition, event } of items) {
      times.set(partition, Math.max(times.get(partition) ?? 0, event.timestamp));
    }
  }

  /**
   * The event time up to which partition `partition`'s sessions have been read on both input
   * topics: idle sessions expire, and ended ones are forgotten, by it. Not the latest time seen
   * on any partition: a first start reads one partition's backlog (or one topic's) before
   * another's, and a stream time that far ahead expired sessions whose SessionEnded was still
   * unread on the lagging partition — the same input gave different memories (issue #19).
   */
  watermark(partition: number): number {
    return Math.min(
      this.consumedTimes.toolCalls.get(partition) ?? 0,
      this.consumedTimes.lifecycle.get(partition) ?? 0,
    );
  }

  /** How far the tool-calls partition is consumed: committed, plus this transaction's batch. */
  consumedOf(work: Work | null, partition: number): number {
    return Math.max(this.toolCallsConsumed.get(partition) ?? 0, work?.consumed.get(partition) ?? 0);
  }

  /** The group's committed tool-call offsets (a predecessor may have consumed them). */
  async refreshConsumed(partitions: number[]): Promise<void> {
    const unique = [...new Set(partitions)];
    for (const [partition, offset] of await this.positions.committedOffsets(unique)) {
      if (offset > (this.toolCallsConsumed.get(partition) ?? 0)) {
        this.toolCallsConsumed.set(partition, offset);
      }
    }
  }

  /** Restores a partition's records from the changelog unless they are in memory. */
  async ensureRestored(partition: number): Promise<void> {
    this.owned.add(partition);
    await this.committedRecords.ensure(partition, (_key, record) => {
      if (record.kind === 'ended') {
        this.endedIndex.set(record.sessionId, {
          partition,
          lastActivityAt: record.lastActivityAt,
        });
        return;
      }
      if (record.kind !== 'session') return;
      this.index.set(record.sessionId, {
        partition,
        lastActivityAt: record.lastActivityAt,
        pending: record.pending.length,
      });
    });
  }

  forgetPartition(partition: number): void {
    this.committedRecords.forget(partition);
    this.toolCallsConsumed.delete(partition);
    for (const [sessionId, entry] of [...this.index]) {
      if (entry.partition === partition) this.index.delete(sessionId);
    }
    for (const [sessionId, entry] of [...this.endedIndex]) {
      if (entry.partition === partition) this.endedIndex.delete(sessionId);
    }
  }
}
