import { join } from 'node:path';
import {
  deadLetterTopic,
  InvalidEventError,
  MisconfigurationError,
  partitionOfKey,
} from '@engram/core';
import BetterSqlite3, { type Database } from 'better-sqlite3';
import { preparePrivateDatabase } from './private-files';
import { migrate } from './sqlite-schema';
import {
  asBuffer,
  headersJson,
  keyText,
  requireReadRange,
  topicInfoOf,
  toLogRecord,
  UnknownTopicError,
  type AppendedAt,
  type AppendRecord,
  type EnsureTopicOptions,
  type LogRecord,
  type TopicInfo,
  type TopicRow,
} from './sqlite-event-log-records';
import { prepareStatements } from './sqlite-event-log-statements';

export {
  UnknownTopicError,
  type AppendedAt,
  type AppendRecord,
  type EnsureTopicOptions,
  type LogRecord,
  type TopicInfo,
} from './sqlite-event-log-records';
export { classifyStorageError } from './sqlite-storage-errors';

export interface SqliteEventLogOptions {
  /** Directory of the database file; created if missing. */
  dataDir: string;
  /** Default `events.db`. */
  fileName?: string;
  /** How long a writer waits for another process's write lock before SQLITE_BUSY. */
  busyTimeoutMs?: number;
  /** Record timestamps of appends without one (epoch millis). */
  clock?: () => number;
}

type Listener = (topic: string) => void;

const DEFAULT_TOMBSTONE_RETENTION_MS = 24 * 60 * 60 * 1000;

/**
 * A durable, partitioned event log in one SQLite file: the embedded mode's Kafka (SPEC §2).
 *
 * - Durability: WAL journal with `synchronous=FULL`, so every committed transaction is fsynced
 *   before `append` returns; an acknowledged append survives SIGKILL and power loss.
 * - Topics have a fixed partition count; offsets are dense per partition, from 0.
 * - Everything that must be atomic (a batch's outputs, dead letters and the group's new offsets)
 *   runs in one `transaction(() => …)`: appends and commits inside it join it.
 * - Several processes may share the file (e.g. `engram hook` appending while `engram start`
 *   consumes): writers are serialised by SQLite's write lock, waiting up to `busyTimeoutMs`.
 *
 * The API is synchronous (better-sqlite3): a call holds the event loop for its few milliseconds.
 */
export class SqliteEventLog {
  readonly path: string;
  private readonly db: Database;
  private readonly clock: () => number;
  private readonly topicCache = new Map<string, TopicRow>();
  private readonly roundRobin = new Map<string, number>();
  private readonly listeners = new Set<Listener>();
  /** Topics appended to in the open transaction, announced after it commits. */
  private readonly pendingNotices = new Set<string>();
  private readonly sql: ReturnType<typeof prepareStatements>;

  private constructor(options: SqliteEventLogOptions) {
    this.path = join(options.dataDir, options.fileName ?? 'events.db');
    // Private to the user (dir 0700, database and journals 0600): it holds prompts and code.
    preparePrivateDatabase(options.dataDir, this.path);
    this.clock = options.clock ?? Date.now;
    this.db = new BetterSqlite3(this.path, { timeout: options.busyTimeoutMs ?? 10_000 });
    try {
      const mode = this.db.pragma('journal_mode = WAL', { simple: true }) as string;
      if (mode !== 'wal') {
        throw new MisconfigurationError(
          `${this.path}: SQLite refused WAL mode (journal_mode=${mode}); put --data-dir on a local disk`,
        );
      }
      this.db.pragma('synchronous = FULL');
      migrate(this.db);
      this.sql = prepareStatements(this.db);
    } catch (error) {
      this.db.close();
      throw error;
    }
  }

  /** Opens (creating if needed) the log in `dataDir`. */
  static open(options: SqliteEventLogOptions): SqliteEventLog {
    return new SqliteEventLog(options);
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  /** False once closed (readiness checks). */
  get isOpen(): boolean {
    return this.db.open;
  }

  /**
   * Runs `work` in one write transaction (BEGIN IMMEDIATE); appends and offset commits inside it
   * commit or roll back together. Nested calls join the outer transaction (as a savepoint).
   * `work` must be synchronous.
   */
  transaction<T>(work: () => T): T {
    if (this.db.inTransaction) return this.db.transaction(work)();
    let result: T;
    try {
      result = this.db.transaction(work).immediate();
    } catch (error) {
      this.pendingNotices.clear();
      throw error;
    }
    const topics = [...this.pendingNotices];
    this.pendingNotices.clear();
    for (const topic of topics) for (const listener of this.listeners) listener(topic);
    return result;
  }

  /** Called after every committed transaction that appended to `topic` (in this process). */
  onAppend(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  // ---- topics -------------------------------------------------------------------------------

  /**
   * Creates the topic if missing. Idempotent; a different partition count (or compaction) than
   * the existing topic's is refused with a MisconfigurationError.
   */
  ensureTopic(topic: string, partitions: number, options: EnsureTopicOptions = {}): void {
    if (!Number.isInteger(partitions) || partitions < 1) {
      throw new RangeError(
        `${topic}: partition count must be a positive integer, got ${partitions}`,
      );
    }
    if (topic.trim() === '') throw new RangeError('topic name must not be empty');
    const compacted = options.compacted ?? false;
    this.transaction(() => {
      this.createTopic(topic, partitions, compacted);
      if (options.withDeadLetter) {
        const dlq = deadLetterTopic(topic);
        if (!this.topicRow(dlq)) this.createTopic(dlq, 1, false);
      }
    });
  }

  private createTopic(topic: string, partitions: number, compacted: boolean): void {
    const existing = this.topicRow(topic);
    if (existing) {
      if (existing.partitions !== partitions || Boolean(existing.compacted) !== compacted) {
        throw new MisconfigurationError(
          `topic ${topic} exists with ${existing.partitions} partition(s)` +
            `${existing.compacted ? ', compacted' : ''}; refusing ${partitions}` +
            `${compacted ? ', compacted' : ''} (partition counts are fixed: keys would move)`,
          { topic, existing: existing.partitions, requested: partitions },
        );
      }
      return;
    }
    const id = Number(
      this.sql.insertTopic.run(topic, partitions, compacted ? 1 : 0, this.clock()).lastInsertRowid,
    );
    for (let partition = 0; partition < partitions; partition++) {
      this.sql.insertPartition.run(id, partition);
    }
  }

  /** The topic's partition count and compaction, or undefined when it does not exist. */
  topic(topic: string): TopicInfo | undefined {
    const row = this.topicRow(topic);
    return row && topicInfoOf(row);
  }

  topics(): TopicInfo[] {
    return this.sql.allTopics.all().map(topicInfoOf);
  }

  private topicRow(topic: string): TopicRow | undefined {
    let row = this.topicCache.get(topic);
    if (!row) {
      // Topics never change once created, so caching them is safe across processes too.
      row = this.sql.topicByName.get(topic);
      if (row) this.topicCache.set(topic, row);
    }
    return row;
  }

  private requireTopic(topic: string): TopicRow {
    const row = this.topicRow(topic);
    if (!row) {
      throw new UnknownTopicError(`topic ${topic} does not exist; create it with ensureTopic`, {
        topic,
      });
    }
    return row;
  }

  private requirePartition(row: TopicRow, partition: number): void {
    if (!Number.isInteger(partition) || partition < 0 || partition >= row.partitions) {
      throw new RangeError(
        `${row.name} has partitions 0..${row.partitions - 1}; partition ${partition} does not exist`,
      );
    }
  }

  // ---- writing ------------------------------------------------------------------------------

  /**
   * Appends records in one transaction (or inside the caller's) and returns where each landed.
   * Records sharing a partition keep their order. Durable once this returns.
   */
  append(topic: string, records: readonly AppendRecord[]): AppendedAt[] {
    const row = this.requireTopic(topic);
    if (records.length === 0) return [];
    return this.transaction(() => {
      const next = new Map<number, number>();
      const placed = records.map((record) => {
        const partition = this.partitionFor(row, record);
        let offset = next.get(partition);
        if (offset === undefined) offset = this.sql.nextOffset.get(row.id, partition)!.next_offset;
        next.set(partition, offset + 1);
        const key = keyText(record.key);
        if (row.compacted && key === null) {
          throw new InvalidEventError(`${topic} is compacted: every record needs a key`, { topic });
        }
        this.sql.insertRecord.run(
          row.id,
          partition,
          offset,
          key,
          record.value,
          headersJson(record.headers),
          record.timestamp ?? this.clock(),
        );
        if (row.compacted && key !== null) {
          if (record.value === null) this.sql.deleteLatest.run(row.id, partition, key);
          else this.sql.upsertLatest.run(row.id, partition, key, offset);
        }
        return { partition, offset };
      });
      for (const [partition, offset] of next) this.sql.setNextOffset.run(offset, row.id, partition);
      this.pendingNotices.add(topic);
      return placed;
    });
  }

  private partitionFor(row: TopicRow, record: AppendRecord): number {
    if (record.partition !== undefined && record.partition !== null) {
      this.requirePartition(row, record.partition);
      return record.partition;
    }
    if (record.key !== undefined && record.key !== null) {
      return partitionOfKey(
        typeof record.key === 'string' ? record.key : new Uint8Array(record.key),
        row.partitions,
      );
    }
    const turn = this.roundRobin.get(row.name) ?? 0;
    this.roundRobin.set(row.name, turn + 1);
    return turn % row.partitions;
  }

  // ---- reading ------------------------------------------------------------------------------

  /** Up to `maxRecords` records of one partition from `fromOffset` on, in offset order. */
  read(topic: string, partition: number, fromOffset: number, maxRecords: number): LogRecord[] {
    const row = this.requireTopic(topic);
    this.requirePartition(row, partition);
    requireReadRange(fromOffset, maxRecords);
    return this.sql.read
      .all(row.id, partition, fromOffset, maxRecords)
      .map((record) => toLogRecord(topic, partition, record));
  }

  /**
   * Replays a partition (or every partition, one after another) from `fromOffset`, reading in
   * pages of `pageSize`: what a new consumer, a rebuilt index or a rewound group sees. (Rewinding
   * a consumer group is `commitOffsets` with the earlier offsets.)
   */
  *replay(
    topic: string,
    options: { partition?: number; fromOffset?: number; pageSize?: number } = {},
  ): Generator<LogRecord> {
    const row = this.requireTopic(topic);
    const partitions =
      options.partition === undefined
        ? Array.from({ length: row.partitions }, (_, p) => p)
        : [options.partition];
    for (const partition of partitions) {
      let offset = options.fromOffset ?? 0;
      for (;;) {
        const page = this.read(topic, partition, offset, options.pageSize ?? 500);
        yield* page;
        if (page.length === 0) break;
        offset = page[page.length - 1].offset + 1;
      }
    }
  }

  /** The next offset of every partition (index = partition). */
  endOffsets(topic: string): number[] {
    const row = this.requireTopic(topic);
    const ends = new Array<number>(row.partitions).fill(0);
    for (const { partition, next_offset } of this.sql.endOffsets.all(row.id)) {
      ends[partition] = next_offset;
    }
    return ends;
  }

  /** Per partition, its first offset stamped at or after `timestamp` (its end when none is). */
  offsetsAtTime(topic: string, timestamp: number): number[] {
    const row = this.requireTopic(topic);
    return this.endOffsets(topic).map(
      (end, partition) => this.sql.firstAtTime.get(row.id, partition, timestamp)?.offset ?? end,
    );
  }

  /**
   * The latest value of every key in the given partitions; a null value (tombstone) removes the
   * key. The embedded readChangelog: for compacted topics one indexed row per live key, for
   * others a scan of the partitions.
   */
  latestByKey(topic: string, partitions: readonly number[]): Map<string, Buffer> {
    const row = this.requireTopic(topic);
    const latest = new Map<string, Buffer>();
    for (const partition of partitions) {
      this.requirePartition(row, partition);
      if (row.compacted) {
        for (const { key, value } of this.sql.latestByKey.iterate(row.id, partition)) {
          latest.set(key, asBuffer(value));
        }
        continue;
      }
      for (const record of this.replay(topic, { partition })) {
        if (record.key === null) continue;
        if (record.value === null) latest.delete(record.key);
        else latest.set(record.key, asBuffer(record.value));
      }
    }
    return latest;
  }

  /**
   * Drops records of a compacted topic that a later record of the same key superseded, and
   * tombstones older than `tombstoneRetentionMs` (kept meanwhile so that readers behind still see
   * the delete). Offsets of the kept records do not change. Returns the number of records removed.
   */
  compact(topic: string, tombstoneRetentionMs = DEFAULT_TOMBSTONE_RETENTION_MS): number {
    const row = this.requireTopic(topic);
    if (!row.compacted) throw new MisconfigurationError(`${topic} is not a compacted topic`);
    return this.transaction(
      () => this.sql.compact.run(row.id, this.clock() - tombstoneRetentionMs).changes,
    );
  }

  // ---- consumer groups ----------------------------------------------------------------------

  /**
   * Sets a group's committed offsets (the next offset to read) for some partitions of a topic.
   * Inside `transaction` it commits with the batch's outputs.
   */
  commitOffsets(groupId: string, topic: string, offsets: ReadonlyMap<number, number>): void {
    const row = this.requireTopic(topic);
    this.transaction(() => {
      const ends = this.endOffsets(topic);
      for (const [partition, offset] of offsets) {
        this.requirePartition(row, partition);
        if (!Number.isInteger(offset) || offset < 0 || offset > ends[partition]) {
          throw new RangeError(
            `${groupId}: offset ${offset} is outside ${topic}[${partition}] (0..${ends[partition]})`,
          );
        }
        this.sql.commitOffset.run(groupId, row.id, partition, offset, this.clock());
      }
    });
  }

  /** A group's committed offsets by partition; partitions it never committed are absent. */
  committedOffsets(groupId: string, topic: string): Map<number, number> {
    const row = this.requireTopic(topic);
    return new Map(
      this.sql.committedOffsets.all(groupId, row.id).map((r) => [r.partition, r.offset]),
    );
  }
}
