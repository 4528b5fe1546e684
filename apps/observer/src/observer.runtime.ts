import type { Embedder } from '@engram/ai';
import {
  CompactedView,
  DownstreamUnavailableError,
  errorMessage,
  memoriesByFileOn,
  redactSecrets,
  startSweepTimer,
  type ObserverSettings,
  type Synthesiser,
} from '@engram/core';
import {
  AvroRegistry,
  contractCodec,
  coPartitionedAssigner,
  createKafka,
  DeadLetterWriter,
  ensureTopics,
  ExactlyOnceProcessor,
  KafkaEventLog,
  readChangelog,
  registerContractSchemas,
  codecOnTopic,
} from '@engram/kafka';
import {
  createGraphWriterDriver,
  ensureGraphSchema,
  Neo4jObserverGraphWriter,
  type Neo4jConnection,
} from '@engram/neo4j';
import { Logger } from '@nestjs/common';
import type { Admin, Kafka } from 'kafkajs';
import type { Driver } from 'neo4j-driver';
import { episodeFeedStage } from './episode-feed.stage';
import { ProjectPromotionStage } from './project-promotion.stage';
import { projectWorkCodec } from './project-work';
import {
  DEFAULT_OBSERVER_TOPICS,
  ObserverStage,
  type ObserverCodecs,
  type ObserverTopics,
  type ToolCallPositions,
} from './observer.stage';

export interface ObserverRuntimeOptions {
  brokers: string[];
  registryUrl: string;
  neo4j: Neo4jConnection;
  /** How long the Neo4j driver retries a failing write itself before the consumer backs off. */
  graphRetryWithinMs?: number;
  topics?: ObserverTopics;
  /** Consumer group; also the prefix of the transactional id. */
  groupId?: string;
  /** Stable per instance, so a restarted instance fences its predecessor's transactions. */
  instanceId?: string;
  /** Partitions of topics this service creates, when the inputs do not exist yet. */
  partitions?: number;
  retry?: { initialMs: number; maxMs: number };
  /** ENGRAM_KAFKA_SESSION_TIMEOUT_MS: how soon a crashed instance's partitions move. */
  sessionTimeoutMs?: number;
  /** How often the timer applies waiting lifecycle events and finishes idle sessions. */
  sweepIntervalMs?: number;
  /** The observer's section of the configuration (EngramConfig.observer). */
  settings: ObserverSettings;
  sessionIdleMs?: number;
  projectRootOf?: (tenantId: string, projectId: string) => string | null;
  clientId?: string;
  /** Embeds promotion drafts for the novelty check (absent: every draft counts as novel). */
  embedder?: Pick<Embedder, 'id' | 'embed'>;
  /** Writes memory texts (absent: the deterministic templates). */
  synthesiser?: Synthesiser;
}

export interface ObserverRuntime {
  kafka: Kafka;
  stage: ObserverStage;
  promotion: ProjectPromotionStage;
  episodeFeed: ReturnType<typeof episodeFeedStage>;
  processor: ExactlyOnceProcessor;
  writer: Neo4jObserverGraphWriter;
  driver: Driver;
  stop(): Promise<void>;
}

export const DEFAULT_OBSERVER_GROUP = 'engram-observer';

export function observerCodecs(topics: ObserverTopics): ObserverCodecs {
  return {
    toolCalls: codecOnTopic(contractCodec('agent.tool-calls.v1'), topics.toolCalls),
    lifecycle: codecOnTopic(contractCodec('agent.lifecycle.v1'), topics.lifecycle),
  };
}

/** Prefixes every topic name (one cluster, several isolated installations or test runs). */
export function prefixedObserverTopics(prefix: string): ObserverTopics {
  const d = DEFAULT_OBSERVER_TOPICS;
  return {
    toolCalls: prefix + d.toolCalls,
    lifecycle: prefix + d.lifecycle,
    changelog: prefix + d.changelog,
    projectWork: prefix + d.projectWork,
    projectState: prefix + d.projectState,
    memories: prefix + d.memories,
    episodes: prefix + d.episodes,
  };
}

/**
 * Creates the observer's topics (idempotent). The inputs are shared with the segmenter and may
 * exist already: the changelog takes the tool-calls topic's partition count, whatever it is, so
 * a session's state lives in the partition number of its events.
 */
export async function ensureObserverTopics(
  kafka: Kafka,
  topics: ObserverTopics,
  partitions: number,
): Promise<number> {
  await ensureTopics(kafka, [
    { topic: topics.toolCalls, partitions },
    { topic: topics.lifecycle, partitions },
    { topic: topics.episodes, partitions, compacted: true },
  ]);
  const admin = kafka.admin();
  await admin.connect();
  let count: number;
  try {
    const inputs = [topics.toolCalls, topics.lifecycle, topics.episodes];
    const { topics: metadata } = await admin.fetchTopicMetadata({ topics: inputs });
    const counts = metadata.map((topic) => `${topic.name}: ${topic.partitions.length}`);
    count = metadata[0].partitions.length;
    // One consumer group reads them all with the co-partitioned assigner.
    if (metadata.some((topic) => topic.partitions.length !== count)) {
      throw new Error(
        `the observer's inputs need one partition count (${counts.join(', ')}); ` +
          'the agent topics are co-partitioned by sessionId',
      );
    }
  } finally {
    await admin.disconnect();
  }
  // The project stage consumes projectWork in the same group: the co-partitioned assigner needs
  // the same partition count on every input.
  await ensureTopics(kafka, [
    { topic: topics.changelog, partitions: count, compacted: true, withDeadLetter: false },
    { topic: topics.projectWork, partitions: count },
    { topic: topics.projectState, partitions: count, compacted: true, withDeadLetter: false },
    { topic: topics.memories, partitions: count, compacted: true },
  ]);
  return count;
}

/** End offsets and this group's committed offsets of the tool-calls partitions. */
function toolCallPositions(admin: Admin, topic: string, groupId: string): ToolCallPositions {
  // Kafka admin failures are outages: retried by the processor, never dead-lettered.
  const unavailable = (error: unknown) =>
    new DownstreamUnavailableError(
      `kafka admin: ${errorMessage(error)}`,
      { topic },
      { cause: error },
    );
  return {
    async endOffset(partition) {
      try {
        const offsets = await admin.fetchTopicOffsets(topic);
        return Number(offsets.find((o) => o.partition === partition)?.high ?? 0);
      } catch (error) {
        throw unavailable(error);
      }
    },
    async committedOffsets(partitions) {
      try {
        const [entry] = await admin.fetchOffsets({ groupId, topics: [topic] });
        const at = (partition: number) => {
          const offset = entry?.partitions.find((p) => p.partition === partition)?.offset;
          return offset === undefined || Number(offset) < 0 ? 0 : Number(offset);
        };
        return new Map(partitions.map((p) => [p, at(p)]));
      } catch (error) {
        throw unavailable(error);
      }
    },
  };
}

/**
 * Starts the observer: topics, schemas and graph constraints in place, the exactly-once processor
 * on the tool-calls and lifecycle topics with the co-partitioned assigner, and the timer.
 */
export async function startObserver(options: ObserverRuntimeOptions): Promise<ObserverRuntime> {
  const logger = new Logger('Observer');
  const topics = options.topics ?? DEFAULT_OBSERVER_TOPICS;
  const groupId = options.groupId ?? DEFAULT_OBSERVER_GROUP;
  const settings = options.settings;
  const kafka = createKafka({ brokers: options.brokers, clientId: options.clientId ?? groupId });
  const registry = new AvroRegistry(options.registryUrl);
  await registerContractSchemas(registry);
  await ensureObserverTopics(kafka, topics, options.partitions ?? 3);

  const driver = createGraphWriterDriver(options.neo4j, {
    ...(options.graphRetryWithinMs !== undefined && { retryWithinMs: options.graphRetryWithinMs }),
  });
  await ensureGraphSchema(driver);
  const writer = new Neo4jObserverGraphWriter(driver, settings);

  const admin = kafka.admin();
  await admin.connect();
  const memories = codecOnTopic(contractCodec('memory.memories.v1'), topics.memories);
  // Commits' renames and deletions, and FileManifests' sweeps, revise the memories about those
  // files (issue #20): the compacted memory topic, read (read_committed) only when a commit
  // renamed or deleted files or a manifest arrived; both stages share the one view.
  const memoryLog = new KafkaEventLog(kafka, registry);
  await memoryLog.connect();
  const memoryIndex = memoriesByFileOn(new CompactedView(memoryLog, memories));
  const stage = new ObserverStage(topics, {
    settings,
    memoriesWithFiles: memoryIndex,
    restore: (partitions) => readChangelog(kafka, topics.changelog, partitions),
    writer,
    positions: toolCallPositions(admin, topics.toolCalls, groupId),
    redact: (text) => redactSecrets(text).text,
    ...(options.projectRootOf && { projectRootOf: options.projectRootOf }),
    ...(options.sessionIdleMs !== undefined && { sessionIdleMs: options.sessionIdleMs }),
  });
  const promotion = new ProjectPromotionStage({
    settings,
    stateTopic: topics.projectState,
    memories,
    memoriesByFile: memoryIndex,
    restore: (partitions) => readChangelog(kafka, topics.projectState, partitions),
    ...(options.embedder && { embedder: options.embedder }),
    ...(options.synthesiser && { synthesiser: options.synthesiser }),
  });
  const episodeFeed = episodeFeedStage(projectWorkCodec(topics.projectWork));
  const codecs = observerCodecs(topics);
  const deadLetters = new DeadLetterWriter(kafka, 'observer');
  await deadLetters.connect();
  const processor = new ExactlyOnceProcessor(kafka, registry, deadLetters, {
    groupId,
    transactionalId: `${groupId}-${options.instanceId ?? '0'}`,
    retry: options.retry ?? { initialMs: 200, maxMs: 30_000 },
    ...(options.sessionTimeoutMs !== undefined && { sessionTimeoutMs: options.sessionTimeoutMs }),
    partitionAssigners: [coPartitionedAssigner],
    onAssignment: (assignment) => {
      stage.onAssignment(assignment[topics.toolCalls] ?? []);
      promotion.onAssignment(assignment[topics.projectWork] ?? []);
    },
  })
    .subscribe(codecs.toolCalls, stage.toolCallStage)
    .subscribe(codecs.lifecycle, stage.lifecycleStage)
    .subscribe(projectWorkCodec(topics.projectWork), promotion)
    .subscribe(codecOnTopic(contractCodec('memory.episodes.v1'), topics.episodes), episodeFeed);
  await processor.start();

  const sweeper = startSweepTimer(processor, stage, options.sweepIntervalMs ?? 5_000, (error) =>
    logger.warn(`observer sweep failed, will retry: ${errorMessage(error)}`),
  );

  return {
    kafka,
    stage,
    promotion,
    episodeFeed,
    processor,
    writer,
    driver,
    async stop() {
      await sweeper.stop();
      await processor.stop();
      await deadLetters.disconnect();
      await memoryLog.disconnect();
      await admin.disconnect();
      await driver.close();
    },
  };
}
