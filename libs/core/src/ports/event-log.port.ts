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
  /** Every event goes to this partition; by default each goes to partitionOfKey(codec.key(e)). */
  partition?: number;
}

/** An event read back from the log, with its numeric offset. */
export interface LoggedEvent<E> extends Omit<Delivered<E>, 'offset'> {
  offset: number;
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
   * Up to `maxRecords` committed events of one partition from `fromOffset` on, in offset order;
   * fewer (or none) at the end of the log. A record that cannot be decoded throws DecodeError or
   * InvalidEventError naming its offset.
   */
  read<E>(
    codec: TopicCodec<E>,
    partition: number,
    fromOffset: number,
    maxRecords: number,
  ): Promise<LoggedEvent<E>[]>;
  /** The next offset of every partition (index = partition number): what a reader catches up to. */
  endOffsets(topic: string): Promise<number[]>;
}
