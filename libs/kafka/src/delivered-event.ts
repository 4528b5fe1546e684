import {
  errorMessage,
  InvalidEventError,
  DecodeError,
  type Delivered,
  type DeliveredTombstone,
  type TopicCodec,
} from '@engram/core';
import type { KafkaMessage } from 'kafkajs';
import type { AvroRegistry } from './avro-registry';

// Delivered and tombstones are transport-neutral (the embedded consumers deliver them too): they
// live in libs/core.
export type { Delivered, DeliveredOrTombstone, DeliveredTombstone } from '@engram/core';
export { isTombstone } from '@engram/core';

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
