import {
  DownstreamUnavailableError,
  errorMessage,
  MisconfigurationError,
  type EventLogPort,
  type ProcessorSpec,
  type SinkConsumer,
  type SinkConsumerSpec,
  type StageProcessor,
  type StreamPlatform,
  type StreamTopic,
  type TailSpec,
  type TopicTail,
} from '@engram/core';
import type { Admin, Kafka } from 'kafkajs';
import { AvroRegistry } from './avro-registry';
import { registerContractSchemas } from './contract-codecs';
import { readChangelog } from './changelog';
import { coPartitionedAssigner } from './co-partitioned-assigner';
import { DeadLetterWriter } from './dead-letter-writer';
import { ExactlyOnceProcessor } from './exactly-once-processor';
import { createKafka } from './kafka-client';
import { KafkaEventLog } from './kafka-event-log';
import { KafkaTopicTail } from './kafka-topic-tail';
import { ReliableConsumer } from './reliable-consumer';
import { ensureTopics } from './topic-admin';

export interface KafkaPlatformOptions {
  brokers: string[];
  registryUrl: string;
  clientId: string;
  /** ENGRAM_KAFKA_SESSION_TIMEOUT_MS: how soon a crashed instance's partitions move. */
  sessionTimeoutMs?: number;
}

/**
 * The distributed StreamPlatform: Kafka with the contract schemas registered. Stateful processors
 * use the co-partitioned assigner and a transactional id `<group>-<instance>`; every processor and
 * sink consumer dead-letters through a writer of its own, closed when the platform closes.
 */
export class KafkaStreamPlatform implements StreamPlatform {
  readonly mode = 'distributed';
  private readonly closers: (() => Promise<void>)[] = [];
  private log?: Promise<KafkaEventLog>;

  private constructor(
    readonly kafka: Kafka,
    readonly registry: AvroRegistry,
    private readonly admin: Admin,
    private readonly options: KafkaPlatformOptions,
  ) {}

  /** Connects, and registers the contract schemas (idempotent). */
  static async connect(options: KafkaPlatformOptions): Promise<KafkaStreamPlatform> {
    const kafka = createKafka({ brokers: options.brokers, clientId: options.clientId });
    const registry = new AvroRegistry(options.registryUrl);
    await registerContractSchemas(registry);
    const admin = kafka.admin();
    await admin.connect();
    return new KafkaStreamPlatform(kafka, registry, admin, options);
  }

  async ensureTopics(topics: readonly StreamTopic[], partitions: number): Promise<void> {
    await ensureTopics(
      this.kafka,
      topics.map((t) => ({ ...t, partitions })),
    );
  }

  async partitionCount(topics: readonly string[]): Promise<number> {
    const { topics: metadata } = await this.unavailableOnFailure(() =>
      this.admin.fetchTopicMetadata({ topics: [...topics] }),
    );
    const counts = metadata.map((topic) => topic.partitions.length);
    if (counts.length === 0) throw new MisconfigurationError('no topics to count partitions of');
    if (counts.some((count) => count !== counts[0])) {
      const shown = metadata.map((topic) => `${topic.name}: ${topic.partitions.length}`);
      throw new MisconfigurationError(
        `these topics need one partition count (${shown.join(', ')}); ` +
          'the agent topics are co-partitioned by sessionId',
      );
    }
    return counts[0];
  }

  readChangelog(topic: string, partitions: readonly number[]): Promise<Map<string, Buffer>> {
    return readChangelog(this.kafka, topic, partitions);
  }

  async endOffset(topic: string, partition: number): Promise<number> {
    const offsets = await this.unavailableOnFailure(() => this.admin.fetchTopicOffsets(topic));
    return Number(offsets.find((o) => o.partition === partition)?.high ?? 0);
  }

  async committedOffsets(
    groupId: string,
    topic: string,
    partitions: readonly number[],
  ): Promise<Map<number, number>> {
    const [entry] = await this.unavailableOnFailure(() =>
      this.admin.fetchOffsets({ groupId, topics: [topic] }),
    );
    const at = (partition: number) => {
      const offset = entry?.partitions.find((p) => p.partition === partition)?.offset;
      return offset === undefined || Number(offset) < 0 ? 0 : Number(offset);
    };
    return new Map(partitions.map((p) => [p, at(p)]));
  }

  eventLog(): Promise<EventLogPort> {
    this.log ??= (async () => {
      const log = new KafkaEventLog(this.kafka, this.registry);
      await log.connect();
      this.closers.push(() => log.disconnect());
      return log;
    })();
    return this.log;
  }

  async createProcessor(spec: ProcessorSpec): Promise<StageProcessor> {
    const deadLetters = await this.deadLetterWriter(spec.service);
    return new ExactlyOnceProcessor(this.kafka, this.registry, deadLetters, {
      groupId: spec.groupId,
      transactionalId: `${spec.groupId}-${spec.instanceId ?? '0'}`,
      retry: spec.retry,
      ...(this.options.sessionTimeoutMs !== undefined && {
        sessionTimeoutMs: this.options.sessionTimeoutMs,
      }),
      partitionAssigners: [coPartitionedAssigner],
      ...(spec.onAssignment && { onAssignment: spec.onAssignment }),
    });
  }

  async createSinkConsumer(spec: SinkConsumerSpec): Promise<SinkConsumer> {
    const deadLetters = await this.deadLetterWriter(spec.service);
    return new ReliableConsumer(this.kafka, this.registry, deadLetters, {
      groupId: spec.groupId,
      retry: spec.retry,
      ...(this.options.sessionTimeoutMs !== undefined && {
        sessionTimeoutMs: this.options.sessionTimeoutMs,
      }),
      fromBeginning: spec.fromBeginning ?? true,
    });
  }

  createTail<E>(spec: TailSpec<E>): Promise<TopicTail> {
    return Promise.resolve(
      new KafkaTopicTail(this.kafka, this.registry, this.admin, spec, {
        ...(this.options.sessionTimeoutMs !== undefined && {
          sessionTimeoutMs: this.options.sessionTimeoutMs,
        }),
      }),
    );
  }

  async close(): Promise<void> {
    for (const close of this.closers.splice(0).reverse()) await close().catch(() => undefined);
    await this.admin.disconnect();
  }

  private async deadLetterWriter(service: string): Promise<DeadLetterWriter> {
    const writer = new DeadLetterWriter(this.kafka, service);
    await writer.connect();
    this.closers.push(() => writer.disconnect());
    return writer;
  }

  /** Kafka admin failures are outages: retried by the processor, never dead-lettered. */
  private async unavailableOnFailure<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      if (error instanceof MisconfigurationError) throw error;
      throw new DownstreamUnavailableError(
        `kafka admin: ${errorMessage(error)}`,
        {},
        { cause: error },
      );
    }
  }
}
