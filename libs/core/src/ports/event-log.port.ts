import type { Delivered, TopicCodec } from './stream-stage';

/** Injection token of the EventLogPort (bound by the Kafka or the embedded adapter's module). */
export const EVENT_LOG = Symbol('EventLog');

export interface TopicDefinition {
  topic: string;
  partitions: number;
  /** Keeps the latest record per key (changelogs, memories); a null value deletes the key. */
  compacted?: boolean;
}

export interface PublishOptions {
  /**
   * Every record goes to this partition; by default each goes to partitionOfKey of its key
   * (codec.key(e) for an event, the key itself for a tombstone).
   */
  partition?: number;
}

/** An event read back from the log, with its numeric offset. */
export interface LoggedEvent<E> extends Omit<Delivered<E>, 'offset'> {
  offset: number;
}

/**
 * A tombstone read back from the log: a record with a key and no value, which deletes the key on
 * a compacted topic. `event === null` tells it from an event (and narrows `key` to a string).
 */
export interface LoggedTombstone extends Omit<LoggedEvent<null>, 'key'> {
  key: string;
}

/** What `read` with `{ tombstones: true }` returns: events, and the deletions of keys. */
export type LoggedEventOrTombstone<E> = LoggedEvent<E> | LoggedTombstone;

export function isLoggedTombstone<E>(item: LoggedEventOrTombstone<E>): item is LoggedTombstone {
  return item.event === null;
}

export interface ReadOptions {
  /**
   * Also return tombstones (as LoggedTombstone items, in offset order among the events): what a
   * reader that rebuilds the latest value per key of a compacted topic needs. Default false: a
   * tombstone is not an event, and `read` passes over it.
   */
  tombstones?: boolean;
}

/**
 * The event log as services see it, whatever runs underneath: Kafka + Schema Registry
 * (distributed) or the SQLite log (embedded). One contract suite (ports/testing) runs against both.
 *
 * Offsets are per partition, from 0, one per record, in append order. Records of one publish call
 * that share a partition keep their order.
 */
export interface EventLogPort {
  /**
   * Creates the topic (and its `<topic>.dlq`) if missing. Idempotent; an existing topic with a
   * different partition count is refused with a MisconfigurationError naming both counts.
   */
  ensureTopic(definition: TopicDefinition): Promise<void>;
  /**
   * Appends typed events; resolves once they are durable (acknowledged). Every event is validated
   * first (codec.validate and the schema): if one fails, nothing is written (InvalidEventError).
   */
  publish<E>(codec: TopicCodec<E>, events: E[], options?: PublishOptions): Promise<void>;
  /**
   * Appends one tombstone (the key, a null value) per key, in order; resolves once they are
   * durable, like `publish`. Each lands on partitionOfKey(key), the partition of the key's
   * events, unless `options.partition` pins it. On a compacted topic a tombstone deletes its key
   * (compaction keeps it for a while, so readers behind still see the delete); readers and
   * consumers that do not ask for tombstones pass over it or dead-letter it. Every key must be a
   * non-empty string: if one is not, nothing is written (InvalidEventError). No keys: no-op.
   */
  publishTombstones(topic: string, keys: string[], options?: PublishOptions): Promise<void>;
  /**
   * Up to `maxRecords` committed events of one partition from `fromOffset` on, in offset order;
   * fewer (or none) only at the end of the log. A record that cannot be decoded throws
   * DecodeError or InvalidEventError naming its offset.
   *
   * Tombstones (null values) are not events: by default `read` passes over them (they do not
   * count towards `maxRecords`, and the offsets of the items returned show the gap). With
   * `{ tombstones: true }` they come back as LoggedTombstone items among the events and count
   * towards `maxRecords`; a tombstone without a key then throws InvalidEventError (it deletes
   * nothing).
   */
  read<E>(
    codec: TopicCodec<E>,
    partition: number,
    fromOffset: number,
    maxRecords: number,
    options?: { tombstones?: false },
  ): Promise<LoggedEvent<E>[]>;
  read<E>(
    codec: TopicCodec<E>,
    partition: number,
    fromOffset: number,
    maxRecords: number,
    options: ReadOptions,
  ): Promise<LoggedEventOrTombstone<E>[]>;
  /** The next offset of every partition (index = partition number): what a reader catches up to. */
  endOffsets(topic: string): Promise<number[]>;
}

/**
 * Why some keys cannot be tombstones (empty when all can): a tombstone deletes its key, so each
 * key must be a string with something in it. Both adapters check this before writing anything.
 */
export function tombstoneKeyProblems(keys: readonly unknown[]): string[] {
  const problems: string[] = [];
  keys.forEach((key, i) => {
    if (typeof key === 'string' && key.trim() !== '') return;
    const shown =
      typeof key === 'string' ? JSON.stringify(key) : key === null ? 'null' : typeof key;
    problems.push(
      `tombstone key ${i} is ${shown}: a tombstone needs a non-empty key (it deletes that key)`,
    );
  });
  return problems;
}
