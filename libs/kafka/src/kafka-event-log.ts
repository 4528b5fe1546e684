import { randomUUID } from 'node:crypto';
import {
  DownstreamUnavailableError,
  errorMessage,
  InvalidEventError,
  MisconfigurationError,
  tombstoneKeyProblems,
  type EventLogPort,
  type LoggedEvent,
  type LoggedEventOrTombstone,
  type PublishOptions,
  type ReadOptions,
  type TopicCodec,
  type TopicDefinition,
} from '@engram/core';
import type { Admin, Kafka, Producer } from 'kafkajs';
import type { AvroRegistry } from './avro-registry';
import { decodeDelivered, deliveredTombstone } from './delivered-event';
import { EventEncoder } from './event-publisher';
import { reliableProducerConfig } from './kafka-client';
import { whileLeaderMoves } from './kafka-errors';
import { ensureTopics } from './topic-admin';

/**
 * The EventLogPort on Kafka + Schema Registry: publishing is EventPublisher's (Avro in the
 * Confluent wire format, idempotent producer, murmur2 partitioner), reading is a short-lived
 * read_committed consumer that seeks to the offset. Reads cost a consumer-group join each: meant
 * for tools, replays and tests, not for hot paths (services consume through the processors).
 */
export class KafkaEventLog implements EventLogPort {
  private readonly producer: Producer;
  private readonly admin: Admin;
  private readonly encoder: EventEncoder;

  constructor(
    private readonly kafka: Kafka,
    private readonly registry: AvroRegistry,
    private readonly readTimeoutMs = 60_000,
  ) {
    this.producer = kafka.producer(reliableProducerConfig());
    this.admin = kafka.admin();
    this.encoder = new EventEncoder(registry);
  }

  async connect(): Promise<void> {
    await this.producer.connect();
    await this.admin.connect();
  }

  async disconnect(): Promise<void> {
    await this.producer.disconnect();
    await this.admin.disconnect();
  }

  async ensureTopic({ topic, partitions, compacted }: TopicDefinition): Promise<void> {
    await ensureTopics(this.kafka, [{ topic, partitions, compacted }]);
    const metadata = await this.admin.fetchTopicMetadata({ topics: [topic] });
    const existing = metadata.topics[0]?.partitions.length ?? 0;
    if (existing !== partitions) {
      throw new MisconfigurationError(
        `topic ${topic} exists with ${existing} partition(s); refusing ${partitions} ` +
          '(partition counts are fixed: keys would move)',
        { topic, existing, requested: partitions },
      );
    }
  }

  async publish<E>(codec: TopicCodec<E>, events: E[], options: PublishOptions = {}): Promise<void> {
    if (events.length === 0) return;
    // toMessage validates first, so one bad event sends nothing.
    const messages = await Promise.all(events.map((e) => this.encoder.toMessage(codec, e)));
    if (options.partition !== undefined) {
      for (const message of messages) message.partition = options.partition;
    }
    await this.producer.send({ topic: codec.topic, messages });
  }

  async publishTombstones(
    topic: string,
    keys: string[],
    options: PublishOptions = {},
  ): Promise<void> {
    const problems = tombstoneKeyProblems(keys);
    if (problems.length > 0) {
      throw new InvalidEventError(`${topic}: ${problems.join('; ')}`, { topic });
    }
    if (keys.length === 0) return;
    // The producer's murmur2 partitioner puts each on partitionOfKey(key), as it does events;
    // acks=all (the producer's default) makes them durable before send resolves.
    await this.producer.send({
      topic,
      messages: keys.map((key) => ({ key, value: null, partition: options.partition })),
    });
  }

  async endOffsets(topic: string): Promise<number[]> {
    const offsets = await this.fetchTopicOffsets(topic);
    const ends = new Array<number>(offsets.length).fill(0);
    for (const { partition, high } of offsets) ends[partition] = Number(high);
    return ends;
  }

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
  async read<E>(
    codec: TopicCodec<E>,
    partition: number,
    fromOffset: number,
    maxRecords: number,
    options: ReadOptions = {},
  ): Promise<LoggedEventOrTombstone<E>[]> {
    const end = (await this.endOffsets(codec.topic))[partition];
    if (end === undefined) {
      throw new RangeError(`${codec.topic} has no partition ${partition}`);
    }
    const records: LoggedEventOrTombstone<E>[] = [];
    if (fromOffset >= end) return records;
    const consumer = this.kafka.consumer({
      groupId: `engram-read-${randomUUID()}`,
      readUncommitted: false,
    });
    await consumer.connect();
    try {
      await consumer.subscribe({ topic: codec.topic, fromBeginning: true });
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(
              new DownstreamUnavailableError(
                `reading ${codec.topic}[${partition}] from ${fromOffset} timed out`,
              ),
            ),
          this.readTimeoutMs,
        );
        const finish = (error?: unknown) => {
          clearTimeout(timer);
          if (error === undefined) resolve();
          else reject(error instanceof Error ? error : new Error(errorMessage(error)));
        };
        let done = false;
        let next = fromOffset;
        // END_BATCH_PROCESS also fires for batches of transaction markers only: the end is known.
        consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
          if (done || payload.partition !== partition) return;
          if (BigInt(payload.lastOffset) + 1n < BigInt(end)) return;
          done = true;
          finish();
        });
        consumer
          .run({
            eachBatchAutoResolve: false,
            eachBatch: async ({ batch }) => {
              if (done || batch.partition !== partition) return;
              try {
                for (const message of batch.messages) {
                  // Batches fetched before the seek took effect may repeat: keep offsets in order.
                  const offset = Number(message.offset);
                  if (offset < next) continue;
                  next = offset + 1;
                  if (message.value === null) {
                    // A tombstone: an item only when asked for, else passed over (not counted).
                    if (!options.tombstones) continue;
                    const tombstone = deliveredTombstone(codec.topic, partition, message);
                    records.push({ ...tombstone, offset });
                  } else {
                    const delivered = await decodeDelivered(
                      this.registry,
                      codec,
                      partition,
                      message,
                    );
                    records.push({ ...delivered, offset });
                  }
                  if (records.length >= maxRecords) {
                    done = true;
                    finish();
                    return;
                  }
                }
              } catch (error) {
                done = true;
                finish(error);
              }
            },
          })
          .then(() => consumer.seek({ topic: codec.topic, partition, offset: String(fromOffset) }))
          .catch(finish);
      });
    } finally {
      await consumer.disconnect();
    }
    return records;
  }

  private fetchTopicOffsets(topic: string): ReturnType<Admin['fetchTopicOffsets']> {
    return whileLeaderMoves(() => this.admin.fetchTopicOffsets(topic));
  }
}
