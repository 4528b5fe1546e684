/**
 * The transport-neutral shape of a consume-transform-produce stage: how a topic's events are
 * described (TopicCodec), what a stage receives (Delivered) and what it emits (StageOutput,
 * RawStageOutput). The Kafka processor (libs/kafka) and the embedded SQLite processor
 * (libs/embedded) run the same ExactlyOnceStage objects. Types only: no driver is imported here.
 */

/**
 * Record headers. Structurally the same as kafkajs' `IHeaders`, so records of either transport fit.
 * The embedded log stores header values as UTF-8 text.
 */
export interface RecordHeaders {
  [key: string]: Buffer | string | (Buffer | string)[] | undefined;
}

/**
 * A record written as it is (no codec): structurally the same as kafkajs' `Message`. `partition`
 * pins the partition; otherwise the key decides (see partitionOfKey).
 */
export interface RawMessage {
  key?: Buffer | string | null;
  value: Buffer | string | null;
  partition?: number;
  headers?: RecordHeaders;
  /** Epoch millis as a decimal string (as kafkajs has it). */
  timestamp?: string;
}

/**
 * How one topic's events map to Avro and to keys. Built from libs/contracts for the real topics;
 * tests can build their own for scratch topics. On Kafka the value is Avro in the Confluent wire
 * format; in the embedded log it is the typed event as JSON, checked against the same schema.
 */
export interface TopicCodec<E> {
  topic: string;
  /** Schema Registry subject (TopicNameStrategy: `<topic>-value`). */
  subject: string;
  schema: object;
  toAvro(event: E): unknown;
  fromAvro(value: unknown): E;
  key(event: E): string;
  /** Semantic checks beyond the schema; each string names a problem. */
  validate?(event: E): string[];
}

/** A decoded, validated event with where it came from. */
export interface Delivered<E> {
  event: E;
  topic: string;
  partition: number;
  /** The record's offset as a decimal string (Kafka offsets are 64-bit). */
  offset: string;
  key: string | null;
  headers: RecordHeaders | undefined;
}

/**
 * A tombstone: a record with a key and a null value, which deletes its key on a compacted topic.
 * Only subscriptions that ask for tombstones receive them; the key is never null or empty.
 */
export interface DeliveredTombstone extends Delivered<null> {
  key: string;
}

/**
 * What a subscription with tombstones receives: a decoded event, or the deletion of a key.
 * `item.event === null` tells them apart (and narrows `item.key` to a string). Assignable to
 * `Delivered<E | null>`, so a handler may also be written against that.
 */
export type DeliveredOrTombstone<E> = Delivered<E> | DeliveredTombstone;

export function isTombstone<E>(item: DeliveredOrTombstone<E>): item is DeliveredTombstone {
  return item.event === null;
}

/** Events a stage emits for one topic (to `partition` when given, else by key). */
export interface StageOutput<O = unknown> {
  codec: TopicCodec<O>;
  events: O[];
  partition?: number;
}

/** Records written as they are (a stage's own state changelog: JSON values, null tombstones). */
export interface RawStageOutput {
  topic: string;
  messages: RawMessage[];
}

export type AnyStageOutput = StageOutput | RawStageOutput;

/**
 * A consume-transform-produce stage. `transform` may stage state changes; the processor calls
 * `onCommitted` once outputs and offsets are committed together, `onAborted` when the transaction
 * was rolled back (the stage must then forget what it staged, because the batch comes again).
 */
export interface ExactlyOnceStage<E> {
  /** Runs before a batch's transaction opens (e.g. to restore state of a newly owned partition). */
  prepare?(topic: string, partition: number): Promise<void>;
  transform(items: Delivered<E>[]): Promise<AnyStageOutput[]> | AnyStageOutput[];
  onCommitted?(): void;
  onAborted?(): void;
}
