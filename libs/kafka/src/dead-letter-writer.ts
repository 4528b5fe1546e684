import { reliableProducerConfig } from './kafka-client';
import type { Batch, Kafka, KafkaMessage, Producer, Transaction } from 'kafkajs';
import { deadLetterHeaders, deadLetterTopic, type DeadLetterSource } from './dead-letter';

export interface DeadLetterRecord {
  source: DeadLetterSource;
  key: Buffer | string | null;
  value: Buffer | null;
  error: unknown;
}

/**
 * Writes the original bytes of a failed record to `<topic>.dlq`, unchanged, with headers saying
 * what went wrong and where it came from — so it can be inspected and replayed, never lost.
 */
export class DeadLetterWriter {
  private readonly producer: Producer;
  private dead = 0;

  constructor(
    kafka: Kafka,
    private readonly service: string,
    private readonly clock: () => Date = () => new Date(),
  ) {
    this.producer = kafka.producer(reliableProducerConfig());
  }

  get count(): number {
    return this.dead;
  }

  connect(): Promise<void> {
    return this.producer.connect();
  }

  async write(
    record: DeadLetterRecord,
    sender: Producer | Transaction = this.producer,
  ): Promise<void> {
    await sender.send({
      topic: deadLetterTopic(record.source.topic),
      messages: [
        {
          key: record.key,
          value: record.value,
          headers: deadLetterHeaders(record.error, record.source, this.service, this.clock()),
        },
      ],
    });
    this.dead += 1;
  }

  disconnect(): Promise<void> {
    return this.producer.disconnect();
  }
}

export function deadLetterOf(
  batch: Batch,
  message: KafkaMessage,
  error: unknown,
): DeadLetterRecord {
  return {
    source: { topic: batch.topic, partition: batch.partition, offset: message.offset },
    key: message.key,
    value: message.value,
    error,
  };
}

export function messageAt(batch: Batch, offset: string): KafkaMessage {
  const message = batch.messages.find((m) => m.offset === offset);
  if (!message) throw new RangeError(`offset ${offset} is not in the batch`);
  return message;
}
