import type { Embedder } from '@engram/ai';
import {
  codecOnTopic,
  CompactedView,
  prefixedTopicNames,
  contractCodec,
  memoriesByFileOn,
  redactSecrets,
  runTopology,
  type EventLogPort,
  type ObserverGraphWriter,
  type ObserverSettings,
  type RunningTopology,
  type TopologyRunSettings,
  type ServiceTopology,
  type StreamPlatform,
  type Synthesiser,
} from '@engram/core';
import { Logger } from '@nestjs/common';
import { episodeFeedStage } from './episode-feed.stage';
import { ProjectPromotionStage } from './project-promotion.stage';
import { WorkUnitOutcomePruning } from './work-unit-outcome-pruning';
import { projectWorkCodec } from './project-work';
import {
  DEFAULT_OBSERVER_TOPICS,
  ObserverStage,
  type ObserverCodecs,
  type ObserverTopics,
} from './observer.stage';

export const DEFAULT_OBSERVER_GROUP = 'engram-observer';

export interface ObserverOptions extends TopologyRunSettings {
  /** Kafka (distributed) or the SQLite log (embedded): the stream half of the mode's providers. */
  platform: StreamPlatform;
  /** The graph half: Neo4jObserverGraphWriter (distributed) or SqliteObserverGraph (embedded). */
  graph: ObserverGraphWriter;
  /** The observer's section of the configuration (EngramConfig.observer). */
  settings: ObserverSettings;
  topics?: ObserverTopics;
  /** Consumer group; on Kafka also the prefix of the transactional id. */
  groupId?: string;
  /** How often the timer applies waiting lifecycle events and finishes idle sessions. */
  sweepIntervalMs?: number;
  sessionIdleMs?: number;
  /** The project's root, to place absolute paths (absent: absolute paths are rejected). */
  projectRootOf?: (tenantId: string, projectId: string) => string | null;
  /** Embeds promotion drafts for the novelty check (absent: every draft counts as novel). */
  embedder?: Pick<Embedder, 'id' | 'embed'>;
  /** Writes memory texts (absent: the deterministic templates). */
  synthesiser?: Synthesiser;
  /** How often the scheduled work_unit_outcome prune runs (default hourly). */
  pruneIntervalMs?: number;
  /** The scheduled prune's clock (default the wall clock): what memories' age is measured by. */
  clock?: () => number;
}

const HOUR_MS = 60 * 60 * 1000;

export interface RunningObserver extends RunningTopology {
  stage: ObserverStage;
  promotion: ProjectPromotionStage;
  pruning: WorkUnitOutcomePruning;
  episodeFeed: ReturnType<typeof episodeFeedStage>;
}

export function observerCodecs(topics: ObserverTopics): ObserverCodecs {
  return {
    toolCalls: codecOnTopic(contractCodec('agent.tool-calls.v1'), topics.toolCalls),
    lifecycle: codecOnTopic(contractCodec('agent.lifecycle.v1'), topics.lifecycle),
  };
}

/** Prefixes every topic name (one cluster, several isolated installations or test runs). */
export function prefixedObserverTopics(prefix: string): ObserverTopics {
  return prefixedTopicNames(DEFAULT_OBSERVER_TOPICS, prefix);
}

/**
 * The observer's topics. The inputs are shared with the segmenter and may exist already; its own
 * topics take their partition count, whatever it is, so a session's state lives in the partition
 * number of its events, and the project stage's projectWork (consumed by the same group with the
 * co-partitioned assigner) has the inputs' count too.
 */
export function observerTopics(topics: ObserverTopics): ServiceTopology['topics'] {
  return {
    inputs: [
      { topic: topics.toolCalls },
      { topic: topics.lifecycle },
      { topic: topics.episodes, compacted: true },
    ],
    own: [
      { topic: topics.changelog, compacted: true, withDeadLetter: false },
      { topic: topics.projectWork },
      { topic: topics.projectState, compacted: true, withDeadLetter: false },
      { topic: topics.memories, compacted: true },
    ],
  };
}

/**
 * Creates the observer's topics (idempotent), e.g. before publishing to them: the inputs with
 * `partitions` if missing, its own with the inputs' count, which it returns.
 */
export async function ensureObserverTopics(
  platform: StreamPlatform,
  topics: ObserverTopics,
  partitions: number,
): Promise<number> {
  const { inputs, own } = observerTopics(topics);
  await platform.ensureTopics(inputs, partitions);
  const count = await platform.partitionCount(inputs.map((t) => t.topic));
  await platform.ensureTopics(own, count);
  return count;
}

/**
 * The observer (SPEC §5) as one topology: a session's tool calls and lifecycle events feed the
 * session stage (graph facts, scratchpads, a timer for waiting lifecycle events and idle
 * sessions), which hands project work to the project promotion stage through projectWork; the
 * segmenter's episodes feed it too. The session stage owns the tool-calls partitions, the
 * promotion stage the projectWork ones.
 */
export function observerTopology(
  options: ObserverOptions,
  /** The platform's event log, where the memory topic is read. */
  memoryLog: EventLogPort,
): {
  topology: ServiceTopology;
  stage: ObserverStage;
  promotion: ProjectPromotionStage;
  pruning: WorkUnitOutcomePruning;
  episodeFeed: ReturnType<typeof episodeFeedStage>;
} {
  const { platform, settings } = options;
  const topics = options.topics ?? DEFAULT_OBSERVER_TOPICS;
  const groupId = options.groupId ?? DEFAULT_OBSERVER_GROUP;
  const memories = codecOnTopic(contractCodec('memory.memories.v1'), topics.memories);
  // Commits' renames and deletions, and FileManifests' sweeps, revise the memories about those
  // files (issue #20): the compacted memory topic, read (read_committed on Kafka) only when a
  // commit renamed or deleted files or a manifest arrived; both stages share the one view.
  const memoryIndex = memoriesByFileOn(new CompactedView(memoryLog, memories));
  const stage = new ObserverStage(topics, {
    settings,
    memoriesWithFiles: memoryIndex,
    restore: (partitions) => platform.readChangelog(topics.changelog, partitions),
    writer: options.graph,
    positions: {
      endOffset: (partition) => platform.endOffset(topics.toolCalls, partition),
      committedOffsets: (partitions) =>
        platform.committedOffsets(groupId, topics.toolCalls, partitions),
    },
    redact: (text) => redactSecrets(text).text,
    ...(options.projectRootOf && { projectRootOf: options.projectRootOf }),
    ...(options.sessionIdleMs !== undefined && { sessionIdleMs: options.sessionIdleMs }),
  });
  const promotion = new ProjectPromotionStage({
    settings,
    stateTopic: topics.projectState,
    memories,
    memoriesByFile: memoryIndex,
    restore: (partitions) => platform.readChangelog(topics.projectState, partitions),
    ...(options.embedder && { embedder: options.embedder }),
    ...(options.synthesiser && { synthesiser: options.synthesiser }),
  });
  const pruning = new WorkUnitOutcomePruning({
    retentionDays: settings.workUnitOutcomeRetentionDays,
    memories,
    lookup: memoryIndex,
    partitionCount: () => platform.partitionCount([topics.projectWork]),
    ...(options.clock && { clock: options.clock }),
  });
  const projectWork = projectWorkCodec(topics.projectWork);
  const episodeFeed = episodeFeedStage(projectWork);
  const codecs = observerCodecs(topics);
  const topology: ServiceTopology = {
    service: 'observer',
    groupId,
    topics: observerTopics(topics),
    bindings: [
      { codec: codecs.toolCalls, stage: stage.toolCallStage },
      { codec: codecs.lifecycle, stage: stage.lifecycleStage },
      { codec: projectWork, stage: promotion },
      {
        codec: codecOnTopic(contractCodec('memory.episodes.v1'), topics.episodes),
        stage: episodeFeed,
      },
    ],
    assignments: [
      { topic: topics.toolCalls, assign: (owned) => stage.onAssignment(owned) },
      { topic: topics.projectWork, assign: (owned) => promotion.onAssignment(owned) },
      { topic: topics.projectWork, assign: (owned) => pruning.onAssignment(owned) },
    ],
    timers: [
      { name: 'observer', stage, intervalMs: options.sweepIntervalMs ?? 5_000 },
      // Seed 002 §13's retention of work_unit_outcome, by the service that writes the memories.
      {
        name: 'work-unit-outcome-prune',
        stage: pruning,
        intervalMs: options.pruneIntervalMs ?? HOUR_MS,
      },
    ],
    waitOn: [topics.toolCalls, topics.lifecycle, topics.episodes],
    internal: [topics.projectWork],
  };
  return { topology, stage, promotion, pruning, episodeFeed };
}

/** Starts the observer on the platform; `stop` drains and commits (platform and graph stay open). */
export async function startObserver(options: ObserverOptions): Promise<RunningObserver> {
  const logger = new Logger('Observer');
  const { topology, stage, promotion, pruning, episodeFeed } = observerTopology(
    options,
    await options.platform.eventLog(),
  );
  const running = await runTopology(options.platform, topology, options, (line) =>
    logger.warn(line),
  );
  return { ...running, stage, promotion, pruning, episodeFeed };
}
