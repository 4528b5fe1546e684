import { decodeStateJson, encodeStateJson } from './state-json';
import type { RawStageOutput } from './stream-stage';

/** A changelog record: the partition it belongs to (a changed partition count leaves it out). */
export interface PartitionedRecord {
  partition: number;
}

export interface KeyedChangelogStateOptions<R extends PartitionedRecord> {
  /** Compacted, partitioned like the input topic that keys the stage. */
  changelogTopic: string;
  /** The changelog's latest record per key, for these partitions. */
  restore: (partitions: number[]) => Promise<Map<string, Buffer>>;
  /** Whether this code reads a restored record (its version); others are left out. */
  accepts: (record: R) => boolean;
  /** A record that cannot be decoded is left out (and reported here). */
  onUnreadable: (key: string, error: unknown) => void;
}

/** A key's change in one transaction: its new record, or null when the key goes (a tombstone). */
interface StagedChange<R> {
  partition: number;
  record: R | null;
}

/**
 * The shell of a stateful exactly-once stage keyed by its input topic (the reflector's projects,
 * the memory merge's memories, the episode–narrative join's halves): per owned partition, the
 * committed record of each key, restored from the changelog the first time the partition is used;
 * the records one transaction changes or removes, staged apart and written to the changelog (a
 * removal as a tombstone) in that transaction; applied when it commits, and
 * everything forgotten when it aborts (the commit may or may not have happened: the changelog,
 * restored on next use, knows). The stage keeps only its domain logic.
 */
export class KeyedChangelogState<R extends PartitionedRecord> {
  private readonly committed = new Map<number, Map<string, R>>();
  private owned = new Set<number>();
  private staged = new Map<string, StagedChange<R>>();

  constructor(private readonly options: KeyedChangelogStateOptions<R>) {}

  /** After a rebalance: forgets partitions no longer owned; new ones restore on first use. */
  onAssignment(partitions: readonly number[]): void {
    this.owned = new Set(partitions);
    for (const partition of [...this.committed.keys()]) {
      if (!this.owned.has(partition)) this.committed.delete(partition);
    }
  }

  /** A new transaction: nothing staged. */
  begin(): void {
    this.staged = new Map();
  }

  /** Restores each partition's records unless they are in memory (a partition used is owned). */
  async restore(partitions: Iterable<number>): Promise<void> {
    for (const partition of partitions) {
      this.owned.add(partition);
      if (this.committed.has(partition)) continue;
      const records = new Map<string, R>();
      for (const [key, value] of await this.options.restore([partition])) {
        try {
          const record = decodeStateJson<R>(value);
          if (record.partition === partition && this.options.accepts(record)) {
            records.set(key, record);
          }
        } catch (error) {
          this.options.onUnreadable(key, error);
        }
      }
      this.committed.set(partition, records);
    }
  }

  /** Restores every owned partition (a timer's sweep over all of them). */
  restoreOwned(): Promise<void> {
    return this.restore([...this.owned]);
  }

  /** The key's record as this transaction sees it: staged (removed: none), else committed. */
  current(partition: number, key: string): R | undefined {
    const staged = this.staged.get(key);
    if (staged) return staged.record ?? undefined;
    return this.committed.get(partition)?.get(key);
  }

  /** Stages the key's new record: written to the changelog in this transaction. */
  stage(key: string, record: R): void {
    this.staged.set(key, { partition: record.partition, record });
  }

  /** Stages the key's removal: a tombstone in the changelog in this transaction. */
  remove(partition: number, key: string): void {
    this.staged.set(key, { partition, record: null });
  }

  /** The records this transaction wrote (removals left out), by key. */
  get touched(): ReadonlyMap<string, R> {
    const written = new Map<string, R>();
    for (const [key, { record }] of this.staged) if (record) written.set(key, record);
    return written;
  }

  /** The committed records of the owned partitions, with their key (a sweep's work). */
  ownedRecords(): { key: string; partition: number; record: R }[] {
    return [...this.committed]
      .filter(([partition]) => this.owned.has(partition))
      .flatMap(([partition, records]) =>
        [...records].map(([key, record]) => ({ key, partition, record })),
      );
  }

  /** Every committed record in memory (tests, metrics). */
  records(): R[] {
    return [...this.committed.values()].flatMap((records) => [...records.values()]);
  }

  /** The changelog records of this transaction, each to its key's partition. */
  changelog(): RawStageOutput {
    return {
      topic: this.options.changelogTopic,
      messages: [...this.staged].map(([key, { partition, record }]) => ({
        key,
        partition,
        value: record === null ? null : encodeStateJson(record),
      })),
    };
  }

  /** The transaction committed: its records are the committed state. */
  commit(): void {
    for (const [key, { partition, record }] of this.staged) {
      const records = this.committed.get(partition);
      if (record === null) records?.delete(key);
      else records?.set(key, record);
    }
    this.staged = new Map();
  }

  /** The transaction aborted: forget it, and the committed state the log may have moved past. */
  abort(): void {
    this.committed.clear();
    this.staged = new Map();
  }
}
