import { errorMessage, redactSecrets, startSweepTimer, type MemoryOptions } from '@engram/core';
import { EmbeddedExactlyOnceProcessor, type SqliteEventLog } from '@engram/embedded';
import { Logger } from '@nestjs/common';
import {
  DEFAULT_DISTILLER_GROUP,
  distillerCodecs,
  projectReflectorOf,
  windowDistillerOf,
  type DistillerLlm,
  type ReflectorSettings,
} from './distiller.runtime';
import {
  DEFAULT_DISTILLER_TOPICS,
  DistillerStage,
  type DistillerTopics,
  type InputPositions,
  type DistillerSettings,
} from './distiller.stage';
import { distillerAssignment, subscribeDistillerStages } from './distiller-wiring';
import { EpisodeSummaryStage, summaryTopicsOf } from './episode-summary.stage';
import { MemoryMergeStage } from './memory-merge.stage';
import { ReflectorStage } from './reflector/reflector.stage';
import type { WindowDistiller } from './window-distiller';

export interface EmbeddedDistillerOptions {
  log: SqliteEventLog;
  topics?: DistillerTopics;
  groupId?: string;
  /** Partitions of the topics it creates when the inputs do not exist yet (default 3). */
  partitions?: number;
  /** How often the timer distils triggers that waited and drops finished sessions. */
  sweepIntervalMs?: number;
  retry?: { initialMs: number; maxMs: number };
  /** Null or absent: the extractive distiller (no model, no network). */
  llm?: DistillerLlm | null;
  /** Session limits, retention and the prompt checks (EngramConfig.distiller, segmenter). */
  settings: DistillerSettings;
  dedupeRetentionMs?: number;
  memory?: Partial<MemoryOptions>;
  /** The reflector's schedule hour, clock and retention (tests). */
  reflector?: ReflectorSettings;
}

export interface EmbeddedDistiller {
  stage: DistillerStage;
  summaries: EpisodeSummaryStage;
  reflector: ReflectorStage;
  merge: MemoryMergeStage;
  processor: EmbeddedExactlyOnceProcessor;
  distiller: WindowDistiller;
  groupId: string;
  /** The topics it consumes from other services: `replay --wait` waits for them. */
  inputs: string[];
  /** Its own repartition topics (narratives, reflector work, memory candidates), consumed by the same group. */
  internal: string[];
  stop(): Promise<void>;
}

/**
 * Creates the distiller's topics on the embedded log (idempotent; same layout as on Kafka). The
 * four inputs are keyed by sessionId and share one partition count (that of the prompts topic if
 * it exists); the narratives and the join's changelog take the episodes topic's count, so a
 * narrative keyed by episodeId lands in the partition number of its episode. A topic that exists
 * with another count is refused by the log, with a message naming it.
 */
export function ensureEmbeddedDistillerTopics(
  log: SqliteEventLog,
  topics: DistillerTopics,
  partitions: number,
): void {
  const count = log.topic(topics.prompts)?.partitions ?? partitions;
  for (const topic of [topics.prompts, topics.toolCalls, topics.lifecycle, topics.boundaries]) {
    log.ensureTopic(topic, count, { withDeadLetter: true });
  }
  log.ensureTopic(topics.memories, count, { compacted: true, withDeadLetter: true });
  log.ensureTopic(topics.changelog, count, { compacted: true });
  log.ensureTopic(topics.episodes, count, { compacted: true, withDeadLetter: true });
  const episodes = log.topic(topics.episodes)!.partitions;
  log.ensureTopic(topics.narratives, episodes, { withDeadLetter: true });
  log.ensureTopic(topics.summaryChangelog, episodes, { compacted: true });
  log.ensureTopic(topics.reflector, count, { withDeadLetter: true });
  log.ensureTopic(topics.reflectorChangelog, log.topic(topics.reflector)!.partitions, {
    compacted: true,
  });
  log.ensureTopic(topics.proposals, count, { compacted: true, withDeadLetter: true });
  log.ensureTopic(topics.memoryCandidates, count, { withDeadLetter: true });
  log.ensureTopic(topics.memoryMergeChangelog, log.topic(topics.memoryCandidates)!.partitions, {
    compacted: true,
  });
}

/**
 * The distiller on the embedded SQLite log (SPEC §2, §8): the same two stages as on Kafka — the
 * distillation by sessionId and the episode–narrative join by episodeId — their changelogs and
 * outputs in the SQLite transaction of their offsets, and the same timer.
 */
export async function startEmbeddedDistiller(
  options: EmbeddedDistillerOptions,
): Promise<EmbeddedDistiller> {
  const logger = new Logger('Distiller');
  const { log } = options;
  const topics = options.topics ?? DEFAULT_DISTILLER_TOPICS;
  const groupId = options.groupId ?? DEFAULT_DISTILLER_GROUP;
  ensureEmbeddedDistillerTopics(log, topics, options.partitions ?? 3);
  const restoreFrom = (topic: string) => (partitions: number[]) =>
    Promise.resolve(log.latestByKey(topic, partitions));
  const codecs = distillerCodecs(topics);
  const distiller = windowDistillerOf(options.llm);
  const stage = new DistillerStage(topics, codecs, {
    restore: restoreFrom(topics.changelog),
    positions: embeddedPositions(log, topics, groupId),
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
  const stages = { stage, summaries, reflector, merge };
  const processor = new EmbeddedExactlyOnceProcessor(log, {
    groupId,
    service: 'distiller',
    retry: options.retry ?? { initialMs: 200, maxMs: 30_000 },
    onAssignment: distillerAssignment(topics, stages),
  });
  subscribeDistillerStages(processor, codecs, stages);
  await processor.start();
  logger.log(`distiller running embedded (group ${groupId}, ${distiller.method})`);

  const intervalMs = options.sweepIntervalMs ?? 5_000;
  // Two timers, two transactions, as on Kafka: a distillation sweep failing (an LLM outage) does
  // not hold back the join's.
  const sweepers = [
    startSweepTimer(processor, stage, intervalMs, (error) =>
      logger.warn(`distiller sweep failed, will retry: ${errorMessage(error)}`),
    ),
    startSweepTimer(
      processor,
      {
        sweep: () => Promise.resolve(summaries.sweep()),
        committed: () => summaries.committed(),
        aborted: () => summaries.aborted(),
      },
      intervalMs,
      (error) => logger.warn(`episode-summary sweep failed, will retry: ${errorMessage(error)}`),
    ),
    startSweepTimer(processor, reflector, intervalMs, (error) =>
      logger.warn(`reflector sweep failed, will retry: ${errorMessage(error)}`),
    ),
  ];

  return {
    stage,
    summaries,
    reflector,
    merge,
    processor,
    distiller,
    groupId,
    inputs: [
      topics.prompts,
      topics.toolCalls,
      topics.lifecycle,
      topics.boundaries,
      topics.episodes,
    ],
    internal: [topics.narratives, topics.reflector, topics.memoryCandidates],
    async stop() {
      await Promise.all(sweepers.map((sweeper) => sweeper.stop()));
      await processor.stop();
    },
  };
}

/** End offsets and this group's committed offsets of the prompts, tool-calls and boundaries. */
function embeddedPositions(
  log: SqliteEventLog,
  topics: DistillerTopics,
  groupId: string,
): InputPositions {
  return {
    endOffsets: (partition) =>
      Promise.resolve({
        prompts: log.endOffsets(topics.prompts)[partition] ?? 0,
        toolCalls: log.endOffsets(topics.toolCalls)[partition] ?? 0,
        boundaries: log.endOffsets(topics.boundaries)[partition] ?? 0,
      }),
    committedOffsets: (partitions) => {
      const prompts = log.committedOffsets(groupId, topics.prompts);
      const toolCalls = log.committedOffsets(groupId, topics.toolCalls);
      const boundaries = log.committedOffsets(groupId, topics.boundaries);
      return Promise.resolve(
        new Map(
          partitions.map((p) => [
            p,
            {
              prompts: prompts.get(p) ?? 0,
              toolCalls: toolCalls.get(p) ?? 0,
              boundaries: boundaries.get(p) ?? 0,
            },
          ]),
        ),
      );
    },
  };
}
