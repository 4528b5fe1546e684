import { OpenAiCompatibleChatClient, type LlmClient } from '@engram/ai';
import {
  DownstreamUnavailableError,
  errorMessage,
  redactSecrets,
  type MemoryOptions,
} from '@engram/core';
import {
  AvroRegistry,
  contractCodec,
  coPartitionedAssigner,
  createKafka,
  DeadLetterWriter,
  ExactlyOnceProcessor,
  readChangelog,
  registerContractSchemas,
  codecOnTopic,
} from '@engram/kafka';
import { Logger } from '@nestjs/common';
import type { Admin, Kafka } from 'kafkajs';
import type { DistillerInputOffsets } from '@engram/core';
import {
  DEFAULT_DISTILLER_TOPICS,
  DistillerStage,
  type DistillerCodecs,
  type DistillerTopics,
  type InputPositions,
  type DistillerSettings,
} from './distiller.stage';
import { ensureDistillerTopics } from './distiller-topics';

export { ensureDistillerTopics } from './distiller-topics';
import { distillerAssignment, subscribeDistillerStages } from './distiller-wiring';
import { EpisodeSummaryStage, narrativeCodec, summaryTopicsOf } from './episode-summary.stage';
import { MemoryMergeStage } from './memory-merge.stage';
import {
  ExtractiveProjectReflector,
  LlmProjectReflector,
  type ProjectReflector,
} from './reflector/project-reflector';
import { reflectorWorkCodec } from './reflector/reflector-work';
import { ReflectorStage, type ReflectorStageOptions } from './reflector/reflector.stage';
import {
  ExtractiveWindowDistiller,
  LlmWindowDistiller,
  type LlmDistillerOptions,
  type WindowDistiller,
} from './window-distiller';

/** An OpenAI-compatible endpoint (ENGRAM_LLM_*), or a client already built (tests, other ports). */
export type DistillerLlm =
  | ({
      baseUrl: string;
      model: string;
      apiKey?: string;
      /** Per HTTP attempt (default 60 s). */
      timeoutMs?: number;
      /** HTTP attempts per call before the outage goes to the processor's backoff (default 2). */
      maxAttempts?: number;
    } & LlmDistillerOptions)
  | ({ client: LlmClient } & LlmDistillerOptions);

export interface DistillerRuntimeOptions {
  brokers: string[];
  registryUrl: string;
  topics?: DistillerTopics;
  /** Consumer group; also the prefix of the transactional id. */
  groupId?: string;
  /** Stable per instance, so a restarted instance fences its predecessor's transactions. */
  instanceId?: string;
  /** Partitions of topics this service creates, when the inputs do not exist yet. */
  partitions?: number;
  retry?: { initialMs: number; maxMs: number };
  /** ENGRAM_KAFKA_SESSION_TIMEOUT_MS: how soon a crashed instance's partitions move. */
  sessionTimeoutMs?: number;
  /** How often the timer distils triggers that waited and drops finished sessions. */
  sweepIntervalMs?: number;
  /** Null or absent: the extractive distiller (no LLM). */
  llm?: DistillerLlm | null;
  /** Session limits, retention and the prompt checks (EngramConfig.distiller, segmenter). */
  settings: DistillerSettings;
  dedupeRetentionMs?: number;
  memory?: Partial<MemoryOptions>;
  clientId?: string;
  /** The reflector's schedule hour, clock and retention (tests). */
  reflector?: ReflectorSettings;
}

/** What a caller may set of the reflector stage. */
export type ReflectorSettings = Pick<
  ReflectorStageOptions,
  'scheduledHourUtc' | 'quietMs' | 'clock' | 'retention'
>;

export interface DistillerRuntime {
  kafka: Kafka;
  stage: DistillerStage;
  summaries: EpisodeSummaryStage;
  reflector: ReflectorStage;
  merge: MemoryMergeStage;
  processor: ExactlyOnceProcessor;
  distiller: WindowDistiller;
  stop(): Promise<void>;
}

export const DEFAULT_DISTILLER_GROUP = 'engram-distiller';

export function distillerCodecs(topics: DistillerTopics): DistillerCodecs {
  return {
    prompts: codecOnTopic(contractCodec('agent.prompts.v1'), topics.prompts),
    toolCalls: codecOnTopic(contractCodec('agent.tool-calls.v1'), topics.toolCalls),
    lifecycle: codecOnTopic(contractCodec('agent.lifecycle.v1'), topics.lifecycle),
    boundaries: codecOnTopic(contractCodec('memory.episode-boundaries.v1'), topics.boundaries),
    memories: codecOnTopic(contractCodec('memory.memories.v1'), topics.memories),
    memoryCandidates: codecOnTopic(contractCodec('memory.memories.v1'), topics.memoryCandidates),
    episodes: codecOnTopic(contractCodec('memory.episodes.v1'), topics.episodes),
    narratives: narrativeCodec(topics.narratives),
    reflector: reflectorWorkCodec(topics.reflector),
    proposals: codecOnTopic(contractCodec('memory.proposals.v1'), topics.proposals),
  };
}

/** Prefixes every topic name (one cluster, several isolated installations or test runs). */
export function prefixedDistillerTopics(prefix: string): DistillerTopics {
  const d = DEFAULT_DISTILLER_TOPICS;
  return {
    prompts: prefix + d.prompts,
    toolCalls: prefix + d.toolCalls,
    lifecycle: prefix + d.lifecycle,
    boundaries: prefix + d.boundaries,
    memories: prefix + d.memories,
    changelog: prefix + d.changelog,
    episodes: prefix + d.episodes,
    narratives: prefix + d.narratives,
    summaryChangelog: prefix + d.summaryChangelog,
    reflector: prefix + d.reflector,
    reflectorChangelog: prefix + d.reflectorChangelog,
    proposals: prefix + d.proposals,
    memoryCandidates: prefix + d.memoryCandidates,
    memoryMergeChangelog: prefix + d.memoryMergeChangelog,
  };
}

/** End offsets and this group's committed offsets of the prompts, tool-calls and boundaries. */
function inputPositions(admin: Admin, topics: DistillerTopics, groupId: string): InputPositions {
  // Kafka admin failures are outages: retried by the processor, never dead-lettered.
  const unavailable = (error: unknown) =>
    new DownstreamUnavailableError(`kafka admin: ${errorMessage(error)}`, {}, { cause: error });
  const endOf = async (topic: string, partition: number): Promise<number> => {
    const offsets = await admin.fetchTopicOffsets(topic);
    return Number(offsets.find((o) => o.partition === partition)?.high ?? 0);
  };
  return {
    async endOffsets(partition): Promise<DistillerInputOffsets> {
      try {
        return {
          prompts: await endOf(topics.prompts, partition),
          toolCalls: await endOf(topics.toolCalls, partition),
          boundaries: await endOf(topics.boundaries, partition),
        };
      } catch (error) {
        throw unavailable(error);
      }
    },
    async committedOffsets(partitions) {
      try {
        const committed = await admin.fetchOffsets({
          groupId,
          topics: [topics.prompts, topics.toolCalls, topics.boundaries],
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
            {
              prompts: at(topics.prompts, p),
              toolCalls: at(topics.toolCalls, p),
              boundaries: at(topics.boundaries, p),
            },
          ]),
        );
      } catch (error) {
        throw unavailable(error);
      }
    },
  };
}

/** The LLM distiller when an endpoint (or client) is configured, else the extractive one. */
export function windowDistillerOf(llm: DistillerLlm | null | undefined): WindowDistiller {
  if (!llm) return new ExtractiveWindowDistiller();
  return new LlmWindowDistiller(llmClientOf(llm), llm);
}

/** The LLM reflector when an endpoint (or client) is configured, else the extractive one. */
export function projectReflectorOf(llm: DistillerLlm | null | undefined): ProjectReflector {
  if (!llm) return new ExtractiveProjectReflector();
  return new LlmProjectReflector(llmClientOf(llm));
}

function llmClientOf(llm: DistillerLlm): LlmClient {
  return 'client' in llm
    ? llm.client
    : new OpenAiCompatibleChatClient({
        baseUrl: llm.baseUrl,
        model: llm.model,
        ...(llm.apiKey !== undefined && { apiKey: llm.apiKey }),
        // Few, bounded attempts in the client: a longer outage is the processor's to wait out
        // (it pauses the partition and heartbeats while it backs off).
        timeoutMs: llm.timeoutMs ?? 60_000,
        maxAttempts: llm.maxAttempts ?? 2,
      });
}

/**
 * Starts the distiller: topics and schemas in place, the exactly-once processor on the prompts,
 * tool-calls, lifecycle and boundaries topics (the distillation, by sessionId) and on the
 * episodes and narratives topics (the summary join, by episodeId) with the co-partitioned
 * assigner, and the timer.
 */
export async function startDistiller(options: DistillerRuntimeOptions): Promise<DistillerRuntime> {
  const logger = new Logger('Distiller');
  const topics = options.topics ?? DEFAULT_DISTILLER_TOPICS;
  const groupId = options.groupId ?? DEFAULT_DISTILLER_GROUP;
  const kafka = createKafka({ brokers: options.brokers, clientId: options.clientId ?? groupId });
  const registry = new AvroRegistry(options.registryUrl);
  await registerContractSchemas(registry);
  await ensureDistillerTopics(kafka, topics, options.partitions ?? 3);

  const admin = kafka.admin();
  await admin.connect();
  const codecs = distillerCodecs(topics);
  const distiller = windowDistillerOf(options.llm);
  const stage = new DistillerStage(topics, codecs, {
    restore: (partitions) => readChangelog(kafka, topics.changelog, partitions),
    positions: inputPositions(admin, topics, groupId),
    distiller,
    redact: (text) => redactSecrets(text).text,
    settings: options.settings,
    ...(options.dedupeRetentionMs !== undefined && {
      dedupeRetentionMs: options.dedupeRetentionMs,
    }),
    ...(options.memory && { memory: options.memory }),
  });
  const summaryTopics = summaryTopicsOf(topics);
  const summaries = new EpisodeSummaryStage(summaryTopics, {
    restore: (partitions) => readChangelog(kafka, summaryTopics.changelog, partitions),
    episodes: codecs.episodes,
  });
  const reflector = new ReflectorStage({
    changelogTopic: topics.reflectorChangelog,
    proposals: codecs.proposals,
    memories: codecs.memories,
    restore: (partitions) => readChangelog(kafka, topics.reflectorChangelog, partitions),
    reflector: projectReflectorOf(options.llm),
    ...options.reflector,
  });
  const merge = new MemoryMergeStage({
    changelogTopic: topics.memoryMergeChangelog,
    memories: codecs.memories,
    restore: (partitions) => readChangelog(kafka, topics.memoryMergeChangelog, partitions),
  });
  const deadLetters = new DeadLetterWriter(kafka, 'distiller');
  await deadLetters.connect();
  const stages = { stage, summaries, reflector, merge };
  const processor = new ExactlyOnceProcessor(kafka, registry, deadLetters, {
    groupId,
    transactionalId: `${groupId}-${options.instanceId ?? '0'}`,
    retry: options.retry ?? { initialMs: 200, maxMs: 30_000 },
    ...(options.sessionTimeoutMs !== undefined && { sessionTimeoutMs: options.sessionTimeoutMs }),
    partitionAssigners: [coPartitionedAssigner],
    onAssignment: distillerAssignment(topics, stages),
  });
  subscribeDistillerStages(processor, codecs, stages);
  await processor.start();
  logger.log(`distiller running (group ${groupId}, ${distiller.method})`);

  let sweeping: Promise<void> | null = null;
  const timer = setInterval(() => {
    sweeping ??= processor
      .produceTransactionally(() => stage.sweep(), {
        onCommitted: () => stage.committed(),
        onAborted: () => stage.aborted(),
      })
      .then(() =>
        processor.produceTransactionally(() => summaries.sweep(), {
          onCommitted: () => summaries.committed(),
          onAborted: () => summaries.aborted(),
        }),
      )
      .then(() =>
        processor.produceTransactionally(() => reflector.sweep(), {
          onCommitted: () => reflector.committed(),
          onAborted: () => reflector.aborted(),
        }),
      )
      .catch((error: unknown) =>
        logger.warn(`distiller sweep failed, will retry: ${errorMessage(error)}`),
      )
      .finally(() => (sweeping = null));
  }, options.sweepIntervalMs ?? 5_000);

  return {
    kafka,
    stage,
    summaries,
    reflector,
    merge,
    processor,
    distiller,
    async stop() {
      clearInterval(timer);
      await sweeping;
      await processor.stop();
      await deadLetters.disconnect();
      await admin.disconnect();
    },
  };
}
