import {
  inputPositionsOn,
  redactSecrets,
  runTopology,
  type MemoryOptions,
  type RunningTopology,
  type TopologyRunSettings,
  type ServiceTopology,
  type StreamPlatform,
} from '@engram/core';
import { Logger } from '@nestjs/common';
import { projectReflectorOf, windowDistillerOf, type DistillerLlm } from './distiller-llm';
import { distillerCodecs, distillerTopics, ensureDistillerTopics } from './distiller-topics';
import {
  DEFAULT_DISTILLER_TOPICS,
  DistillerStage,
  type DistillerSettings,
  type DistillerTopics,
} from './distiller.stage';
import { EpisodeSummaryStage, summaryTopicsOf } from './episode-summary.stage';
import { MemoryMergeStage } from './memory-merge.stage';
import { ReflectorStage, type ReflectorStageOptions } from './reflector/reflector.stage';
import type { WindowDistiller } from './window-distiller';

export const DEFAULT_DISTILLER_GROUP = 'engram-distiller';

/** What a caller may set of the reflector stage. */
export type ReflectorSettings = Pick<
  ReflectorStageOptions,
  'scheduledHourUtc' | 'quietMs' | 'clock' | 'retention'
>;

export interface DistillerOptions extends TopologyRunSettings {
  /** Kafka (distributed) or the SQLite log (embedded): the only difference between the modes. */
  platform: StreamPlatform;
  topics?: DistillerTopics;
  /** Consumer group; on Kafka also the prefix of the transactional id. */
  groupId?: string;
  /** How often the timers distil triggers that waited, join episodes and reflect. */
  sweepIntervalMs?: number;
  /** The LLM provider the caller chose; null or absent: the extractive distiller and reflector. */
  llm?: DistillerLlm | null;
  /** Session limits, retention and the prompt checks (EngramConfig.distiller, segmenter). */
  settings: DistillerSettings;
  dedupeRetentionMs?: number;
  memory?: Partial<MemoryOptions>;
  /** The reflector's schedule hour, clock and retention (tests). */
  reflector?: ReflectorSettings;
}

/** The distiller's four exactly-once stages. */
export interface DistillerStages {
  stage: DistillerStage;
  summaries: EpisodeSummaryStage;
  reflector: ReflectorStage;
  merge: MemoryMergeStage;
}

export interface RunningDistiller extends RunningTopology, DistillerStages {
  distiller: WindowDistiller;
}

/**
 * The distiller (SPEC §8) as one topology, one consumer group, four stages: the distillation
 * (prompts, tool calls, lifecycle and boundaries, by sessionId), the episode–narrative join (by
 * episodeId), the reflector (distillations and review decisions, by project) and the memory merge
 * (each memory's candidate versions, by memoryId). Each stage owns the partitions of the topic
 * that keys it; three timers, each sweep in a transaction of its own, so a distillation sweep
 * failing (an LLM outage) holds back neither the join's nor the reflector's.
 */
export function distillerTopology(options: DistillerOptions): {
  topology: ServiceTopology;
  stages: DistillerStages;
  distiller: WindowDistiller;
} {
  const { platform } = options;
  const topics = options.topics ?? DEFAULT_DISTILLER_TOPICS;
  const groupId = options.groupId ?? DEFAULT_DISTILLER_GROUP;
  const codecs = distillerCodecs(topics);
  const restoreFrom = (topic: string) => (partitions: number[]) =>
    platform.readChangelog(topic, partitions);
  const distiller = windowDistillerOf(options.llm);
  const stage = new DistillerStage(topics, codecs, {
    restore: restoreFrom(topics.changelog),
    positions: inputPositionsOn(platform, groupId, {
      prompts: topics.prompts,
      toolCalls: topics.toolCalls,
      boundaries: topics.boundaries,
    }),
    distiller,
    redact: (text) => redactSecrets(text).text,
    settings: options.settings,
    ...(options.dedupeRetentionMs !== undefined && {
      dedupeRetentionMs: options.dedupeRetentionMs,
    }),
    ...(options.memory && { memory: options.memory }),
  });
  const summaries = new EpisodeSummaryStage(summaryTopicsOf(topics), {
    restore: restoreFrom(topics.summaryChangelog),
    episodes: codecs.episodes,
  });
  const reflector = new ReflectorStage({
    changelogTopic: topics.reflectorChangelog,
    proposals: codecs.proposals,
    memories: codecs.memories,
    restore: restoreFrom(topics.reflectorChangelog),
    reflector: projectReflectorOf(options.llm),
    ...options.reflector,
  });
  const merge = new MemoryMergeStage({
    changelogTopic: topics.memoryMergeChangelog,
    memories: codecs.memories,
    restore: restoreFrom(topics.memoryMergeChangelog),
  });
  const intervalMs = options.sweepIntervalMs ?? 5_000;
  const topology: ServiceTopology = {
    service: 'distiller',
    groupId,
    topics: distillerTopics(topics),
    bindings: [
      { codec: codecs.prompts, stage: stage.promptStage },
      { codec: codecs.toolCalls, stage: stage.toolCallStage },
      { codec: codecs.lifecycle, stage: stage.lifecycleStage },
      { codec: codecs.boundaries, stage: stage.boundaryStage },
      { codec: codecs.episodes, stage: summaries.episodeStage },
      { codec: codecs.narratives, stage: summaries.narrativeStage },
      { codec: codecs.reflector, stage: reflector.workStage },
      { codec: codecs.memoryCandidates, stage: merge.candidateStage },
    ],
    assignments: [
      { topic: topics.prompts, assign: (owned) => stage.onAssignment(owned) },
      { topic: topics.episodes, assign: (owned) => summaries.onAssignment(owned) },
      { topic: topics.reflector, assign: (owned) => reflector.onAssignment(owned) },
      { topic: topics.memoryCandidates, assign: (owned) => merge.onAssignment(owned) },
    ],
    timers: [
      { name: 'distiller', stage, intervalMs },
      {
        name: 'episode-summary',
        stage: {
          sweep: () => Promise.resolve(summaries.sweep()),
          committed: () => summaries.committed(),
          aborted: () => summaries.aborted(),
        },
        intervalMs,
      },
      { name: 'reflector', stage: reflector, intervalMs },
    ],
    waitOn: [
      topics.prompts,
      topics.toolCalls,
      topics.lifecycle,
      topics.boundaries,
      topics.episodes,
    ],
    internal: [topics.narratives, topics.reflector, topics.memoryCandidates],
  };
  return { topology, stages: { stage, summaries, reflector, merge }, distiller };
}

/**
 * Starts the distiller on the platform: its topics in place (ensureDistillerTopics: the
 * co-partitioning checks), the processor and the timers; `stop` drains and commits (the platform
 * stays open).
 */
export async function startDistiller(options: DistillerOptions): Promise<RunningDistiller> {
  const logger = new Logger('Distiller');
  const { topology, stages, distiller } = distillerTopology(options);
  const partitions = options.partitions ?? 3;
  await ensureDistillerTopics(
    options.platform,
    options.topics ?? DEFAULT_DISTILLER_TOPICS,
    partitions,
  );
  const running = await runTopology(options.platform, topology, options, (line) =>
    logger.warn(line),
  );
  logger.log(
    `distiller running ${options.platform.mode} (group ${topology.groupId}, ${distiller.method})`,
  );
  return { ...running, ...stages, distiller };
}
