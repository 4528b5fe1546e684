import {
  errorMessage,
  InvalidEventError,
  DecodeError,
  type Delivered,
  type TopicCodec,
} from '@engram/core';
import type { KafkaMessage } from 'kafkajs';
import type { AvroRegistry } from './avro-registry';

// Delivered is transport-neutral (the embedded processor delivers it too): it lives in libs/core.
export type { Delivered } from '@engram/core';

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

/**
 * Raw record → typed, validated event. Throws classified errors only: DecodeError /
 * SchemaNotFoundError for bad bytes, InvalidEventError for failed semantic checks,
 * DownstreamUnavailableError when the registry is down.
 */
export async function decodeDelivered<E>(
  registry: AvroRegistry,
  codec: TopicCodec<E>,
  partition: number,
  message: KafkaMessage,
): Promise<Delivered<E>> {
  const avroValue = await registry.decode(message.value, codec.schema);
  let event: E;
  try {
    event = codec.fromAvro(avroValue);
  } catch (error) {
    throw new DecodeError(
      `cannot map ${codec.topic} record: ${errorMessage(error)}`,
      {},
      { cause: error },
    );
  }
  const problems = codec.validate?.(event) ?? [];
  if (problems.length > 0) throw new InvalidEventError(problems.join('; '));
  return {
    event,
    topic: codec.topic,
    partition,
    offset: message.offset,
    key: message.key?.toString() ?? null,
    headers: message.headers,
  };
}

/**
 * A record with a null value → a tombstone of its key, without asking the registry. A tombstone
 * without a key (null or empty) deletes nothing: InvalidEventError, so it is dead-lettered.
 */
export function deliveredTombstone(
  topic: string,
  partition: number,
  message: KafkaMessage,
): DeliveredTombstone {
  const key = message.key?.toString() ?? '';
  if (key === '') {
    throw new InvalidEventError(
      `tombstone at ${topic}[${partition}]@${message.offset} has no key: nothing to delete`,
      { topic, partition, offset: message.offset },
    );
  }
  return { event: null, topic, partition, offset: message.offset, key, headers: message.headers };
}
