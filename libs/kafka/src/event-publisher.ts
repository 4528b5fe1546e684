import { InvalidEventError } from '@engram/core';
import { reliableProducerConfig } from './kafka-client';
import type { IHeaders, Kafka, Message, Producer, Transaction } from 'kafkajs';
import type { AvroRegistry } from './avro-registry';
import type { TopicCodec } from './topic-codec';

/**
 * Encodes typed events in the Confluent wire format and keys them per their topic. Schemas are
 * registered on first use (one request per subject) so publishers need no set-up step.
 */
export class EventEncoder {
  private readonly schemaIds = new Map<string, Promise<number>>();

  constructor(private readonly registry: AvroRegistry) {}

  /** Throws InvalidEventError (before anything is sent) when the codec's checks fail. */
  async toMessage<E>(codec: TopicCodec<E>, event: E, headers?: IHeaders): Promise<Message> {
    const problems = codec.validate?.(event) ?? [];
    if (problems.length > 0) {
      throw new InvalidEventError(`${codec.topic}: ${problems.join('; ')}`, { topic: codec.topic });
    }
    const schemaId = await this.schemaId(codec);
    const value = await this.registry.encode(schemaId, codec.toAvro(event));
    return { key: codec.key(event), value, headers };
  }

  private schemaId(codec: TopicCodec<unknown>): Promise<number> {
    let id = this.schemaIds.get(codec.subject);
    if (!id) {
      id = this.registry.register(codec.subject, codec.schema);
      id.catch(() => this.schemaIds.delete(codec.subject));
      this.schemaIds.set(codec.subject, id);
    }
    return id;
  }
}

/** An idempotent producer of typed events (at-least-once to Kafka, no duplicates on retry). */
export class EventPublisher {
  private readonly producer: Producer;
  private readonly encoder: EventEncoder;

  constructor(kafka: Kafka, registry: AvroRegistry) {
    this.producer = kafka.producer(reliableProducerConfig());
    this.encoder = new EventEncoder(registry);
  }

  connect(): Promise<void> {
    return this.producer.connect();
  }

  async publish<E>(
    codec: TopicCodec<E>,
    events: E[],
    sender: Producer | Transaction = this.producer,
  ): Promise<void> {
    if (events.length === 0) return;
    const messages = await Promise.all(events.map((e) => this.encoder.toMessage(codec, e)));
    await sender.send({ topic: codec.topic, messages });
  }

  disconnect(): Promise<void> {
    return this.producer.disconnect();
  }
}
