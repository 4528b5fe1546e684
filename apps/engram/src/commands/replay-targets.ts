import type { EngramConfig } from '@engram/config';
import { TOPIC_LIST, type ReplayLineError, type Typed } from '@engram/contracts';
import { deadLetterHeaders, type EventLogPort } from '@engram/core';
import { EmbeddedStreamPlatform, SqliteEventLog, SqliteEventLogAdapter } from '@engram/embedded';
import {
  AvroRegistry,
  contractCodec,
  createKafka,
  DeadLetterWriter,
  KafkaEventLog,
  registerContractSchemas,
  valueSubject,
  type TopicCodec,
} from '@engram/kafka';
import type { Admin } from 'kafkajs';
import { ensureDistillerTopics, prefixedDistillerTopics } from '@engram/app-distiller';
import { ensureObserverTopics, prefixedObserverTopics } from '@engram/app-observer';
import { ensureSegmenterTopics, prefixedTopics } from '@engram/app-segmenter';
import { embeddedDeadLetters, type DeadLetterStore } from '../dead-letters';
import { kafkaDeadLetters } from '../dead-letters-kafka';

/** Where `engram replay` writes: the embedded log or the configured Kafka. */
export interface ReplayTarget {
  port: EventLogPort;
  /** A line that failed validation, kept in `<topic>.dlq` (or engram.replay.dlq). */
  deadLetter(error: ReplayLineError, topic: string): Promise<void>;
  /** The log's dead letters (every `<topic>.dlq`), where the target can read them. */
  deadLetters?: DeadLetterStore;
  /** The group's committed offset per partition of `topic` (0 when none). */
  committedOffsets(groupId: string, topic: string): Promise<Map<number, number>>;
  close(): Promise<void>;
}

/** Lines whose type is unknown have no topic: their dead letters go here. */
export const REPLAY_DLQ_SOURCE = 'engram.replay';

/** The contract codec of a topic under the configured prefix. */
export function prefixedCodec(config: EngramConfig, topic: string): TopicCodec<Typed> {
  const codec = contractCodec(topic as never) as TopicCodec<Typed>;
  const name = config.topicPrefix + topic;
  return { ...codec, topic: name, subject: valueSubject(name) };
}

/** Every agent and memory topic, created with the segmenter's partition count. */
async function ensureContractTopics(config: EngramConfig, port: EventLogPort): Promise<void> {
  for (const spec of TOPIC_LIST) {
    await port.ensureTopic({
      topic: config.topicPrefix + spec.topic,
      partitions: config.segmenter.partitions,
      compacted: spec.compacted,
    });
  }
}

/** The topics of the embedded services (segmenter, observer, distiller; the indexer's are among them). */
async function ensureEmbeddedServiceTopics(
  log: SqliteEventLog,
  config: EngramConfig,
): Promise<void> {
  const partitions = config.segmenter.partitions;
  const platform = new EmbeddedStreamPlatform(log);
  await ensureSegmenterTopics(platform, prefixedTopics(config.topicPrefix), partitions);
  await ensureObserverTopics(platform, prefixedObserverTopics(config.topicPrefix), partitions);
  await ensureDistillerTopics(platform, prefixedDistillerTopics(config.topicPrefix), partitions);
}

export async function embeddedTarget(config: EngramConfig, dataDir: string): Promise<ReplayTarget> {
  const log = SqliteEventLog.open({ dataDir });
  const port = new SqliteEventLogAdapter(log);
  await ensureContractTopics(config, port);
  // Every service's topics, as `engram start` creates them: `--wait` reads their offsets, and
  // a data dir that `engram start` never ran on has none yet.
  await ensureEmbeddedServiceTopics(log, config);
  log.ensureTopic(config.topicPrefix + REPLAY_DLQ_SOURCE, 1, { withDeadLetter: true });
  return {
    port,
    deadLetters: embeddedDeadLetters(log),
    deadLetter(error, topic) {
      log.append(`${topic}.dlq`, [
        {
          value: error.raw,
          headers: deadLetterHeaders(
            error,
            { topic, partition: 0, offset: String(error.line) },
            'engram-replay',
            new Date(),
          ),
        },
      ]);
      return Promise.resolve();
    },
    committedOffsets: (groupId, topic) => Promise.resolve(log.committedOffsets(groupId, topic)),
    close: () => Promise.resolve(log.close()),
  };
}

export async function distributedTarget(config: EngramConfig): Promise<ReplayTarget> {
  const kafka = createKafka({ brokers: config.kafka.brokers, clientId: 'engram-replay' });
  const registry = new AvroRegistry(config.schemaRegistry.url);
  await registerContractSchemas(registry);
  const port = new KafkaEventLog(kafka, registry);
  await port.connect();
  await ensureContractTopics(config, port);
  await port.ensureTopic({ topic: config.topicPrefix + REPLAY_DLQ_SOURCE, partitions: 1 });
  const deadLetters = new DeadLetterWriter(kafka, 'engram-replay');
  await deadLetters.connect();
  const admin: Admin = kafka.admin();
  await admin.connect();
  const deadLetterStore = await kafkaDeadLetters(kafka, registry, config.topicPrefix);
  return {
    port,
    deadLetters: deadLetterStore,
    deadLetter: (error, topic) =>
      deadLetters.write({
        source: { topic, partition: 0, offset: String(error.line) },
        key: null,
        value: Buffer.from(error.raw),
        error,
      }),
    async committedOffsets(groupId, topic) {
      const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] });
      return new Map(
        (committed?.partitions ?? []).map((p) => [p.partition, Math.max(0, Number(p.offset))]),
      );
    },
    async close() {
      await deadLetterStore.close();
      await deadLetters.disconnect();
      await admin.disconnect();
      await port.disconnect();
    },
  };
}
