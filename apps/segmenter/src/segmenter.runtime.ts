import {
  errorMessage,
  redactSecrets,
  startSweepTimer,
  type LlmContinuityAssessor,
  type SegmenterSettings,
} from '@engram/core';
import {
  AvroRegistry,
  contractCodec,
  coPartitionedAssigner,
  createKafka,
  DeadLetterWriter,
  ensureTopics,
  ExactlyOnceProcessor,
  readChangelog,
  registerContractSchemas,
  codecOnTopic,
} from '@engram/kafka';
import { Logger } from '@nestjs/common';
import type { Admin, Kafka } from 'kafkajs';
import {
  DEFAULT_SEGMENTER_TOPICS,
  SegmenterStage,
  type EmbedTexts,
  type InputOffsets,
  type InputPositions,
  type SegmenterCodecs,
  type SegmenterTopics,
} from './segmenter.stage';

export interface SegmenterRuntimeOptions {
  brokers: string[];
  registryUrl: string;
  settings: SegmenterSettings;
  topics?: SegmenterTopics;
  /** Consumer group; also the prefix of the transactional id. */
  groupId?: string;
  /** Stable per instance, so a restarted instance fences its predecessor's transactions. */
  instanceId?: string;
  partitions?: number;
  retry?: { initialMs: number; maxMs: number };
  /** ENGRAM_KAFKA_SESSION_TIMEOUT_MS: how soon a crashed instance's partitions move. */
  sessionTimeoutMs?: number;
  /** How often the idle-episode timer runs. */
  sweepIntervalMs?: number;
  clientId?: string;
  /** Required in hybrid mode: embeds prompt texts. */
  embed?: EmbedTexts;
  /** The optional LLM half of cross-thread linking. */
  assessor?: LlmContinuityAssessor;
}

export interface SegmenterRuntime {
  kafka: Kafka;
  stage: SegmenterStage;
  processor: ExactlyOnceProcessor;
  stop(): Promise<void>;
}

export function segmenterCodecs(topics: SegmenterTopics): SegmenterCodecs {
  return {
    prompts: codecOnTopic(contractCodec('agent.prompts.v1'), topics.prompts),
    toolCalls: codecOnTopic(contractCodec('agent.tool-calls.v1'), topics.toolCalls),
    lifecycle: codecOnTopic(contractCodec('agent.lifecycle.v1'), topics.lifecycle),
    boundaries: codecOnTopic(contractCodec('memory.episode-boundaries.v1'), topics.boundaries),
    episodes: codecOnTopic(contractCodec('memory.episodes.v1'), topics.episodes),
    threadLinks: codecOnTopic(contractCodec('memory.thread-links.v1'), topics.threadLinks),
  };
}

/** End offsets and this group's committed offsets of the prompts and tool-calls partitions. */
function inputPositions(admin: Admin, topics: SegmenterTopics, groupId: string): InputPositions {
  const endOf = async (topic: string, partition: number): Promise<number> => {
    const offsets = await admin.fetchTopicOffsets(topic);
    return Number(offsets.find((o) => o.partition === partition)?.high ?? 0);
  };
  return {
    async endOffsets(partition): Promise<InputOffsets> {
      return {
        prompts: await endOf(topics.prompts, partition),
        toolCalls: await endOf(topics.toolCalls, partition),
      };
    },
    async committedOffsets(partitions): Promise<Map<number, InputOffsets>> {
      const committed = await admin.fetchOffsets({
        groupId,
        topics: [topics.prompts, topics.toolCalls],
      });
      const at = (topic: string, partition: number): number => {
        const offset = committed
          .find((t) => t.topic === topic)
          ?.partitions.find((p) => p.partition === partition)?.offset;
        return offset === undefined || Number(offset) < 0 ? 0 : Number(offset);
      };
      return new Map(
        partitions.map((p) => [
          p,
          { prompts: at(topics.prompts, p), toolCalls: at(topics.toolCalls, p) },
        ]),
      );
    },
  };
}

/** Creates the segmenter's topics (idempotent): inputs and changelog share the partition count. */
export async function ensureSegmenterTopics(
  kafka: Kafka,
  topics: SegmenterTopics,
  partitions: number,
): Promise<void> {
  await ensureTopics(kafka, [
    { topic: topics.prompts, partitions },
    { topic: topics.toolCalls, partitions },
    { topic: topics.lifecycle, partitions },
    { topic: topics.boundaries, partitions },
    { topic: topics.episodes, partitions, compacted: true },
    { topic: topics.threadLinks, partitions, compacted: true },
    { topic: topics.changelog, partitions, compacted: true, withDeadLetter: false },
  ]);
}

/**
 * Starts the segmenter: topics and schemas in place, the exactly-once processor on the three input
 * topics with the co-partitioned assigner, and the idle-episode timer.
 */
export async function startSegmenter(options: SegmenterRuntimeOptions): Promise<SegmenterRuntime> {
  const logger = new Logger('Segmenter');
  if (options.settings.mode === 'hybrid' && !options.embed) {
    throw new Error('hybrid segmentation needs an embedder (SegmenterRuntimeOptions.embed)');
  }
  const topics = options.topics ?? DEFAULT_SEGMENTER_TOPICS;
  const groupId = options.groupId ?? 'engram-segmenter';
  const kafka = createKafka({ brokers: options.brokers, clientId: options.clientId ?? groupId });
  const registry = new AvroRegistry(options.registryUrl);
  await registerContractSchemas(registry);
  await ensureSegmenterTopics(kafka, topics, options.partitions ?? 3);

  const admin = kafka.admin();
  await admin.connect();
  const codecs = segmenterCodecs(topics);
  const stage = new SegmenterStage(
    topics,
    codecs,
    options.settings,
    (partitions) => readChangelog(kafka, topics.changelog, partitions),
    (text) => redactSecrets(text).text,
    inputPositions(admin, topics, groupId),
    options.embed,
    options.assessor ?? null,
  );
  const deadLetters = new DeadLetterWriter(kafka, 'segmenter');
  await deadLetters.connect();
  const processor = new ExactlyOnceProcessor(kafka, registry, deadLetters, {
    groupId,
    transactionalId: `${groupId}-${options.instanceId ?? '0'}`,
    retry: options.retry ?? { initialMs: 200, maxMs: 30_000 },
    ...(options.sessionTimeoutMs !== undefined && { sessionTimeoutMs: options.sessionTimeoutMs }),
    partitionAssigners: [coPartitionedAssigner],
    onAssignment: (assignment) => stage.onAssignment(assignment[topics.prompts] ?? []),
  })
    .subscribe(codecs.prompts, stage.promptStage)
    .subscribe(codecs.toolCalls, stage.toolCallStage)
    .subscribe(codecs.lifecycle, stage.lifecycleStage);
  await processor.start();

  const sweeper = startSweepTimer(processor, stage, options.sweepIntervalMs ?? 5_000, (error) =>
    logger.warn(`idle-episode sweep failed, will retry: ${errorMessage(error)}`),
  );

  return {
    kafka,
    stage,
    processor,
    async stop() {
      await sweeper.stop();
      await processor.stop();
      await deadLetters.disconnect();
      await admin.disconnect();
    },
  };
}
