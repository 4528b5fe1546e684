import type { Embedder } from '@engram/ai';
import type { EngramConfig } from '@engram/config';
import { observerSettings, segmenterSettings, type SegmentationMode } from '@engram/core';
import { Logger } from '@nestjs/common';
import { SqliteEventLog, SqliteObserverGraph } from '@engram/embedded';
import {
  startEmbeddedDistiller,
  type EmbeddedDistiller,
  DEFAULT_DISTILLER_GROUP,
  prefixedDistillerTopics,
} from '@engram/app-distiller';
import {
  startEmbeddedObserver,
  type EmbeddedObserver,
  prefixedObserverTopics,
  DEFAULT_OBSERVER_GROUP,
} from '@engram/app-observer';
import {
  embeddedEmbedder,
  LEXICAL_ONLY_EMBEDDER,
  startEmbeddedRetrieval,
  type EmbeddedRetrieval,
  DEFAULT_INDEXER_GROUP_ID,
  prefixedRetrievalTopics,
} from '@engram/app-retrieval';
import {
  startEmbeddedSegmenter,
  type EmbeddedSegmenter,
  continuityAssessorOf,
  prefixedTopics,
  promptEmbedderOf,
} from '@engram/app-segmenter';

export interface EmbeddedServicesOptions {
  config: EngramConfig;
  dataDir: string;
  /** Timers (idle episodes, waiting lifecycle events); short in the demo and tests. */
  sweepIntervalMs?: number;
  /**
   * The retrieval indexer's embedder, also the observer's for the novelty check of promotions;
   * default: the local MiniLM model if installed, else none (BM25-only recall, no novelty check,
   * said in the log) — see `embeddedEmbedder`.
   */
  retrievalEmbedder?: Embedder;
  /** The distiller's LLM; default the configured one (ENGRAM_LLM_*), null: extractive. */
  llm?: EngramConfig['llm'];
}

export interface EmbeddedServices {
  log: SqliteEventLog;
  graph: SqliteObserverGraph;
  segmenter: EmbeddedSegmenter;
  observer: EmbeddedObserver;
  distiller: EmbeddedDistiller;
  /** The retrieval indexer into `retrieval.db`, and a RecallService on it. */
  retrieval: EmbeddedRetrieval;
  /** Names for people: what runs. */
  running: string[];
  stop(): Promise<void>;
}

/**
 * Every service that runs embedded, in this process, on the SQLite log and graph in `dataDir`
 * (SPEC §2) — what `engram start` and `engram demo` run. Same stages as distributed mode, same
 * topic names and consumer groups (so `engram replay --wait` waits for the same groups).
 */
export async function startEmbeddedServices(
  options: EmbeddedServicesOptions,
): Promise<EmbeddedServices> {
  const { config, dataDir } = options;
  const log = SqliteEventLog.open({ dataDir });
  const settings = observerSettings();
  const graph = SqliteObserverGraph.open({ dataDir, rule: settings });
  const sweepIntervalMs = options.sweepIntervalMs ?? config.segmenter.sweepIntervalMs;
  const embedder = options.retrievalEmbedder ?? (await embeddedEmbedder());
  const segmentation = embeddedSegmentation(config, embedder);
  const segmenter = await startEmbeddedSegmenter({
    log,
    settings: segmenterSettings({
      mode: segmentation.mode,
      inactivityTimeoutMinutes: config.segmenter.inactivityMinutes,
      inactivityTimeoutByChannel: config.segmenter.inactivityByChannel,
      inactivityTimeoutByTenant: config.segmenter.inactivityByTenant,
    }),
    topics: prefixedTopics(config.topicPrefix),
    groupId: config.topicPrefix + config.segmenter.groupId,
    partitions: config.segmenter.partitions,
    sweepIntervalMs,
    retry: config.retry,
    ...(segmentation.embed && { embed: segmentation.embed }),
    assessor: continuityAssessorOf(options.llm === undefined ? config.llm : options.llm),
  });
  const observer = await startEmbeddedObserver({
    log,
    graph,
    settings,
    topics: prefixedObserverTopics(config.topicPrefix),
    groupId: config.topicPrefix + DEFAULT_OBSERVER_GROUP,
    partitions: config.segmenter.partitions,
    sweepIntervalMs,
    retry: config.retry,
    ...(embedder !== LEXICAL_ONLY_EMBEDDER && { embedder }),
  });
  const distiller = await startEmbeddedDistiller({
    log,
    topics: prefixedDistillerTopics(config.topicPrefix),
    groupId: config.topicPrefix + DEFAULT_DISTILLER_GROUP,
    partitions: config.segmenter.partitions,
    sweepIntervalMs,
    retry: config.retry,
    llm: options.llm === undefined ? config.llm : options.llm,
    reflector: { scheduledHourUtc: config.distiller.reflectionHourUtc },
  });
  const retrieval = startEmbeddedRetrieval({
    log,
    dataDir,
    embedder,
    topics: prefixedRetrievalTopics(config.topicPrefix),
    groupId: config.topicPrefix + DEFAULT_INDEXER_GROUP_ID,
    partitions: config.segmenter.partitions,
    retry: config.retry,
  });
  return {
    log,
    graph,
    segmenter,
    observer,
    distiller,
    retrieval,
    running: ['segmenter', 'observer', 'distiller', 'retrieval indexer'],
    async stop() {
      await retrieval.stop();
      await distiller.stop();
      await observer.stop();
      await segmenter.stop();
      graph.close();
      log.close();
    },
  };
}

/**
 * The configured segmentation mode (ENGRAM_SEGMENTER_MODE, hybrid by default) with the process's
 * embedder; without the model, hybrid falls back to keyword (said in the log), as recall falls
 * back to BM25, so the one-laptop install runs before `npm run models:setup`.
 */
function embeddedSegmentation(
  config: EngramConfig,
  embedder: Embedder,
  logger: { warn(message: string): void } = new Logger('Segmenter'),
): { mode: SegmentationMode; embed?: (texts: string[]) => Promise<number[][]> } {
  if (config.segmenter.mode === 'keyword') return { mode: 'keyword' };
  if (embedder === LEXICAL_ONLY_EMBEDDER) {
    logger.warn('hybrid segmentation needs the embedding model: segmenting by keywords');
    return { mode: 'keyword' };
  }
  return { mode: 'hybrid', embed: promptEmbedderOf(embedder) };
}
