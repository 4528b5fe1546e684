import {
  CommittedChangelog,
  inputsReached,
  progressOf,
  type DistillerInputOffsets,
  type DistillerSessionProgress,
} from '@engram/core';
import type { Delivered } from '@engram/core';
import type { Logger } from '@nestjs/common';
import { decodeRecord, type DistillerRecord } from './distiller-records';
import type { DistillerStageOptions, InputPositions } from './distiller-stage-options';
import { maxOffsets, NOTHING, type StagedWrite } from './distiller-work';

/**
 * What the distiller has committed, in memory: the changelog's records of the owned partitions
 * (as bytes), an index of their sessions and dedupe keys, and how far each input partition is
 * consumed; and the stream time.
 */
export class DistillerCommittedState {
  readonly committedRecords: CommittedChangelog<DistillerRecord>;
  readonly sessions = new Map<string, { partition: number } & DistillerSessionProgress>();
  readonly dedupe = new Map<string, { partition: number; at: number }>();
  owned = new Set<number>();
  readonly consumed = new Map<number, DistillerInputOffsets>();
  /** The latest event time seen: dedupe keys are kept for a span of event time. */
  streamTime = 0;

  constructor(
    restore: DistillerStageOptions['restore'],
    private readonly positions: InputPositions,
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

  /** Keeps the in-memory indexes in step with a committed (or restored) changelog write. */
  index(write: StagedWrite): void {
    const { key, partition } = write;
    if (key.startsWith('session:')) {
      const sessionId = key.slice('session:'.length);
      if (!write.progress) this.sessions.delete(sessionId);
      else this.sessions.set(sessionId, { partition, ...write.progress });
    } else if (key.startsWith('distilled:')) {
      const dedupeKey = key.slice('distilled:'.length);
      if (write.at === undefined) this.dedupe.delete(dedupeKey);
      else this.dedupe.set(dedupeKey, { partition, at: write.at });
    }
  }

  /** End offsets of the prompts and tool-calls partitions of these triggers, read now. */
  async endsOf<E>(triggers: Delivered<E>[]): Promise<Map<number, DistillerInputOffsets>> {
    const ends = new Map<number, DistillerInputOffsets>();
    for (const partition of new Set(triggers.map((item) => item.partition))) {
      ends.set(partition, await this.positions.endOffsets(partition));
    }
    return ends;
  }

  consumedOf(partition: number): DistillerInputOffsets {
    return this.consumed.get(partition) ?? NOTHING;
  }

  reached(partition: number, until: DistillerInputOffsets): boolean {
    return inputsReached(until, this.consumedOf(partition));
  }

  /** The group's committed input offsets (a predecessor may have consumed them). */
  async refreshConsumed(partitions: number[]): Promise<void> {
    const committed = await this.positions.committedOffsets([...new Set(partitions)]);
    for (const [partition, offsets] of committed) {
      this.consumed.set(partition, maxOffsets(this.consumedOf(partition), offsets));
    }
  }

  /** Restores a partition's records from the changelog unless they are in memory. */
  async ensureRestored(partition: number): Promise<void> {
    this.owned.add(partition);
    await this.committedRecords.ensure(partition, (key, record) => {
      const value = this.committedRecords.get(partition, key)!;
      if (record.kind === 'session') {
        this.index({ key, partition, value, progress: progressOf(record.session) });
        this.streamTime = Math.max(this.streamTime, record.session.lastActivityAt);
      } else {
        this.index({ key, partition, value, at: record.at });
      }
    });
  }

  forgetPartition(partition: number): void {
    this.committedRecords.forget(partition);
    this.consumed.delete(partition);
    for (const [sessionId, entry] of [...this.sessions]) {
      if (entry.partition === partition) this.sessions.delete(sessionId);
    }
    for (const [key, entry] of [...this.dedupe]) {
      if (entry.partition === partition) this.dedupe.delete(key);
    }
  }
}
