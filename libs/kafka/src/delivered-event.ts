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
