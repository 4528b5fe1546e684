import { DecodeError } from '@engram/core';
import { AvroRegistry, type TopicCodec } from '@engram/kafka';

// Compacted topics delete a key with a tombstone: a record whose value is null. ReliableConsumer
// decodes every value through `registry.decode(message.value, schema)` (decodeDelivered), and a
// null value is a DecodeError there — it would be dead-lettered, and the document never deleted.
// Until ReliableConsumer surfaces tombstones itself (see apps/retrieval/README.md), the indexer
// gives its consumer a registry that passes null through as TOMBSTONE, and wraps its codecs so the
// compacted topics turn TOMBSTONE into a typed record and the other topics still refuse it.

/** What TombstoneAwareRegistry decodes a null value to. */
export const TOMBSTONE: unique symbol = Symbol('engram.tombstone');

/** An AvroRegistry that decodes a null value (a tombstone) to TOMBSTONE instead of failing. */
export class TombstoneAwareRegistry extends AvroRegistry {
  override decode<T>(bytes: Buffer | null, readerSchema?: object): Promise<T> {
    if (bytes === null) return Promise.resolve(TOMBSTONE as T);
    return super.decode<T>(bytes, readerSchema);
  }
}

/** A record of a compacted topic: a new value for its key, or the key's deletion. */
export type Compacted<E> = { kind: 'upsert'; event: E } | { kind: 'tombstone' };

/**
 * The codec of a compacted topic whose tombstones mean "delete". The key of a tombstone is not in
 * its (absent) value: handlers take it from `Delivered.key`.
 */
export function withTombstones<E>(codec: TopicCodec<E>): TopicCodec<Compacted<E>> {
  return {
    topic: codec.topic,
    subject: codec.subject,
    schema: codec.schema,
    toAvro: (record) => codec.toAvro(eventOf(record, codec.topic)),
    fromAvro: (value) =>
      value === TOMBSTONE
        ? { kind: 'tombstone' }
        : { kind: 'upsert', event: codec.fromAvro(value) },
    key: (record) => codec.key(eventOf(record, codec.topic)),
    validate: (record) =>
      record.kind === 'tombstone' ? [] : (codec.validate?.(record.event) ?? []),
  };
}

/** The codec of a topic without tombstones: a null value stays poison (dead-lettered). */
export function rejectTombstones<E>(codec: TopicCodec<E>): TopicCodec<E> {
  return {
    ...codec,
    fromAvro: (value) => {
      if (value === TOMBSTONE) {
        throw new DecodeError(`null value (a tombstone) on ${codec.topic}, which has none`);
      }
      return codec.fromAvro(value);
    },
  };
}

function eventOf<E>(record: Compacted<E>, topic: string): E {
  if (record.kind === 'tombstone') {
    throw new TypeError(`a tombstone of ${topic} has no value to encode: produce a null value`);
  }
  return record.event;
}
