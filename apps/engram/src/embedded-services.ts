import type { Embedder } from '@engram/ai';
import type { EngramConfig } from '@engram/config';
import type { SegmentationMode, TenantTokens } from '@engram/core';
import {
  processMetrics,
  serveMetrics,
  type MetricsAddress,
  type MetricsServer,
} from '@engram/metrics';
import { Logger } from '@nestjs/common';
import {
  EmbeddedStreamPlatform,
  SqliteEventLog,
  SqliteObserverGraph,
  SqliteRetrievalStore,
} from '@engram/embedded';
import {
  startDistiller,
  type RunningDistiller,
  DEFAULT_DISTILLER_GROUP,
  prefixedDistillerTopics,
  startDistillerReview,
  type ReviewServer,
} from '@engram/app-distiller';
import {
  startObserver,
  type RunningObserver,
  prefixedObserverTopics,
  DEFAULT_OBSERVER_GROUP,
} from '@engram/app-observer';
import {
  embeddedEmbedder,
  LEXICAL_ONLY_EMBEDDER,
  sqliteBackend,
  startRetrievalWithRecall,
  type RetrievalWithRecall,
  DEFAULT_INDEXER_GROUP_ID,
  prefixedRetrievalTopics,
} from '@engram/app-retrieval';
import {
  startSegmenter,
  type RunningSegmenter,
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
  /** The reflector's clock and quiet period (tests; default: the wall clock, one minute). */
  reflector?: { clock?: () => number; quietMs?: number };
  /**
   * Serve the review API (engram.review.v1) on the embedded log, as the distiller does on Kafka:
   * `url` is ENGRAM_REVIEW_GRPC_URL, `tokens` grpcTokensOf(config) (null: loopback only).
   * Absent: no server (`engram demo`, tests).
   */
  review?: { url: string; tokens: TenantTokens | null };
  /**
   * Serve /metrics, /healthz and /readyz here (`engram start`: EngramConfig.metrics; port 0: any
   * free port). Absent or null: no server (`engram demo`, tests); the metrics are recorded anyway.
   */
  metrics?: MetricsAddress | null;
}

export interface EmbeddedServices {
  log: SqliteEventLog;
  graph: SqliteObserverGraph;
  segmenter: RunningSegmenter;
  observer: RunningObserver;
  distiller: RunningDistiller;
  /** The retrieval indexer into `retrieval.db`, and a RecallService on it. */
  retrieval: RetrievalWithRecall & { store: SqliteRetrievalStore };
  /** The review API, when `review` was given. */
  review: ReviewServer | null;
  /** The metrics and health server, when `metrics` was given and its port was free. */
  metrics: MetricsServer | null;
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
  const removeLogCheck = processMetrics().readiness.add('event log', () => log.isOpen);
  // One configuration for both modes: the same sections as the distributed services' (DI).
  const settings = config.observer;
  const graph = SqliteObserverGraph.open({ dataDir, rule: settings });
  const sweepIntervalMs = options.sweepIntervalMs ?? config.segmenter.sweepIntervalMs;
  const embedder = options.retrievalEmbedder ?? (await embeddedEmbedder());
  const segmentation = embeddedSegmentation(config, embedder);
  // The mode's one difference: the stream platform every service's topology runs on.
  const platform = new EmbeddedStreamPlatform(log);
  const segmenter = await startSegmenter({
    platform,
    settings: { ...config.segmenter.settings, mode: segmentation.mode },
    topics: prefixedTopics(config.topicPrefix),
    groupId: config.topicPrefix + config.segmenter.groupId,
    partitions: config.inputs.partitions,
    sweepIntervalMs,
    retry: config.retry,
    ...(segmentation.embed && { embed: segmentation.embed }),
    assessor: continuityAssessorOf(options.llm === undefined ? config.llm : options.llm),
  });
  const observer = await startObserver({
    platform,
    graph,
    settings,
    topics: prefixedObserverTopics(config.topicPrefix),
    groupId: config.topicPrefix + DEFAULT_OBSERVER_GROUP,
    partitions: config.inputs.partitions,
    sweepIntervalMs,
    retry: config.retry,
    ...(embedder !== LEXICAL_ONLY_EMBEDDER && { embedder }),
  });
  const distiller = await startDistiller({
    platform,
    topics: prefixedDistillerTopics(config.topicPrefix),
    groupId: config.topicPrefix + DEFAULT_DISTILLER_GROUP,
    partitions: config.inputs.partitions,
    sweepIntervalMs,
    retry: config.retry,
    llm: options.llm === undefined ? config.llm : options.llm,
    settings: { ...config.distiller, prompts: config.segmenter.settings },
    reflector: { scheduledHourUtc: config.distiller.reflectionHourUtc, ...options.reflector },
  });
  // The retrieval backend is the SQLite store beside the log (distributed: Elasticsearch).
  const store = SqliteRetrievalStore.open({ dataDir });
  const retrieval = {
    ...(await startRetrievalWithRecall({
      platform,
      backend: sqliteBackend(store),
      embedder,
      topics: prefixedRetrievalTopics(config.topicPrefix),
      groupId: config.topicPrefix + DEFAULT_INDEXER_GROUP_ID,
      partitions: config.inputs.partitions,
      retry: config.retry,
      ranking: config.ranking,
    })),
    store,
  };
  const stopServices = async () => {
    await retrieval.stop();
    store.close();
    await distiller.stop();
    await observer.stop();
    await segmenter.stop();
    graph.close();
    log.close();
    removeLogCheck();
  };
  let review: ReviewServer | null = null;
  if (options.review) {
    try {
      review = await startDistillerReview(
        platform,
        prefixedDistillerTopics(config.topicPrefix),
        options.review,
      );
    } catch (error) {
      await stopServices();
      throw error;
    }
  }
  const metrics = await serveMetrics(options.metrics ?? null);
  return {
    log,
    graph,
    segmenter,
    observer,
    distiller,
    retrieval,
    review,
    metrics,
    running: ['segmenter', 'observer', 'distiller', 'retrieval indexer'],
    async stop() {
      await metrics?.stop();
      await review?.stop();
      await stopServices();
    },
  };
}

/**
 * The configured segmentation mode (ENGRAM_SEGMENTER_MODE, hybrid by default) with the process's
 * embedder; without the model, hybrid's learned rule decides on its lexical features alone (said
 * in the log), as recall falls back to BM25, so the one-laptop install runs before
 * `npm run models:setup`.
 */
function embeddedSegmentation(
  config: EngramConfig,
  embedder: Embedder,
  logger: { warn(message: string): void } = new Logger('Segmenter'),
): { mode: SegmentationMode; embed?: (texts: string[]) => Promise<number[][]> } {
  if (config.segmenter.mode === 'keyword') return { mode: 'keyword' };
  if (embedder === LEXICAL_ONLY_EMBEDDER) {
    logger.warn(
      'the embedding model is missing: hybrid segmentation decides on keywords, episode length and gaps alone',
    );
    return { mode: 'hybrid' };
  }
  return { mode: 'hybrid', embed: promptEmbedderOf(embedder) };
}
