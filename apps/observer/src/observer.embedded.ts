import type { Embedder } from '@engram/ai';
import { codecOnTopic, contractCodec } from '@engram/kafka';
import {
  CompactedView,
  errorMessage,
  memoriesByFileOn,
  startSweepTimer,
  redactSecrets,
  type ObserverSettings,
  type ObserverGraphStore,
} from '@engram/core';
import {
  EmbeddedExactlyOnceProcessor,
  SqliteEventLogAdapter,
  type SqliteEventLog,
} from '@engram/embedded';
import { Logger } from '@nestjs/common';
import { DEFAULT_OBSERVER_GROUP, observerCodecs } from './observer.runtime';
import { DEFAULT_OBSERVER_TOPICS, ObserverStage, type ObserverTopics } from './observer.stage';
import { episodeFeedStage } from './episode-feed.stage';
import { ProjectPromotionStage } from './project-promotion.stage';
import { projectWorkCodec } from './project-work';

export interface EmbeddedObserverOptions {
  log: SqliteEventLog;
  /** The graph (SqliteObserverGraph in embedded mode). */
  graph: ObserverGraphStore;
  /** The observer's section of the configuration (EngramConfig.observer). */
  settings: ObserverSettings;
  topics?: ObserverTopics;
  groupId?: string;
  partitions?: number;
  sweepIntervalMs?: number;
  retry?: { initialMs: number; maxMs: number };
  embedder?: Pick<Embedder, 'id' | 'embed'>;
  sessionIdleMs?: number;
}

export interface EmbeddedObserver {
  stage: ObserverStage;
  promotion: ProjectPromotionStage;
  episodeFeed: ReturnType<typeof episodeFeedStage>;
  processor: EmbeddedExactlyOnceProcessor;
  groupId: string;
  /** The topics it consumes from other services: `replay --wait` waits for them. */
  inputs: string[];
  /** Its own repartition topic, consumed by the same group after the inputs. */
  internal: string[];
  stop(): Promise<void>;
}

/** Creates the observer's topics on the embedded log (idempotent; same layout as on Kafka). */
export function ensureEmbeddedObserverTopics(
  log: SqliteEventLog,
  topics: ObserverTopics,
  partitions: number,
): void {
  for (const topic of [topics.toolCalls, topics.lifecycle, topics.projectWork]) {
    log.ensureTopic(topic, partitions, { withDeadLetter: true });
  }
  for (const topic of [topics.memories, topics.episodes]) {
    log.ensureTopic(topic, partitions, { compacted: true, withDeadLetter: true });
  }
  for (const topic of [topics.changelog, topics.projectState]) {
    log.ensureTopic(topic, partitions, { compacted: true });
  }
}

/**
 * The observer on the embedded SQLite log and graph (SPEC §2): the same two stages as on Kafka
 * and Neo4j, their changelogs and outputs in the SQLite transaction of their offsets.
 */
export async function startEmbeddedObserver(
  options: EmbeddedObserverOptions,
): Promise<EmbeddedObserver> {
  const logger = new Logger('Observer');
  const { log } = options;
  const topics = options.topics ?? DEFAULT_OBSERVER_TOPICS;
  const groupId = options.groupId ?? DEFAULT_OBSERVER_GROUP;
  const settings = options.settings;
  ensureEmbeddedObserverTopics(log, topics, options.partitions ?? 3);
  const restoreFrom = (topic: string) => (partitions: number[]) =>
    Promise.resolve(log.latestByKey(topic, partitions));
  const memories = codecOnTopic(contractCodec('memory.memories.v1'), topics.memories);
  // Commits' renames and deletions, and FileManifests' sweeps, revise the memories about those
  // files (issue #20); both stages read the one view of the memory topic.
  const memoryIndex = memoriesByFileOn(new CompactedView(new SqliteEventLogAdapter(log), memories));
  const stage = new ObserverStage(topics, {
    settings,
    memoriesWithFiles: memoryIndex,
    restore: restoreFrom(topics.changelog),
    writer: options.graph,
    positions: {
      endOffset: (partition) => Promise.resolve(log.endOffsets(topics.toolCalls)[partition] ?? 0),
      committedOffsets: (partitions) => {
        const committed = log.committedOffsets(groupId, topics.toolCalls);
        return Promise.resolve(new Map(partitions.map((p) => [p, committed.get(p) ?? 0])));
      },
    },
    redact: (text) => redactSecrets(text).text,
    ...(options.sessionIdleMs !== undefined && { sessionIdleMs: options.sessionIdleMs }),
  });
  const promotion = new ProjectPromotionStage({
    settings,
    stateTopic: topics.projectState,
    memories,
    restore: restoreFrom(topics.projectState),
    ...(options.embedder && { embedder: options.embedder }),
    memoriesByFile: memoryIndex,
  });
  const episodeFeed = episodeFeedStage(projectWorkCodec(topics.projectWork));
  const codecs = observerCodecs(topics);
  const processor = new EmbeddedExactlyOnceProcessor(log, {
    groupId,
    service: 'observer',
    retry: options.retry ?? { initialMs: 200, maxMs: 30_000 },
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
    stage,
    promotion,
    episodeFeed,
    processor,
    groupId,
    inputs: [topics.toolCalls, topics.lifecycle, topics.episodes],
    internal: [topics.projectWork],
    async stop() {
      await sweeper.stop();
      await processor.stop();
    },
  };
}
