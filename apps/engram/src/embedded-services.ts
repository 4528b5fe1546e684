import type { Embedder } from '@engram/ai';
import { ConfigModule, RETRIEVAL_BACKEND, type EngramConfig } from '@engram/config';
import type { TenantTokens } from '@engram/core';
import {
  processMetrics,
  serveMetrics,
  type MetricsAddress,
  type MetricsServer,
} from '@engram/metrics';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory, type ModuleRef } from '@nestjs/core';
import type { SqliteEventLog, SqliteObserverGraph, SqliteRetrievalStore } from '@engram/embedded';
import { DistillerService, type ReviewServer, type RunningDistiller } from '@engram/app-distiller';
import { ObserverService, type RunningObserver } from '@engram/app-observer';
import { SegmenterService, type RunningSegmenter } from '@engram/app-segmenter';
import {
  createRecallStack,
  embeddedEmbedder,
  RetrievalIndexerService,
  type RetrievalBackend,
  type RetrievalWithRecall,
} from '@engram/app-retrieval';
import {
  EmbeddedProvidersModule,
  openEmbeddedResources,
  type EmbeddedResources,
} from './embedded-providers.module';
import { engramRootModule, ENGRAM_SERVICES, ENGRAM_SERVICE_NAMES } from './engram-root.module';

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
  /** The retrieval indexer into `retrieval.db`, and a RecallService on it. */
  segmenter: RunningSegmenter;
  observer: RunningObserver;
  distiller: RunningDistiller;
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
 * (SPEC §2) — what `engram start` and `engram demo` run: one Nest application context of the
 * same root module as distributed mode (the service modules), with embedded mode's providers.
 * Same stages, topic names and consumer groups (so `engram replay --wait` waits for the same
 * groups). The log, graph and store are opened here and closed after the context closed.
 */
export async function startEmbeddedServices(
  options: EmbeddedServicesOptions,
): Promise<EmbeddedServices> {
  const { config, dataDir } = options;
  const embedder = options.retrievalEmbedder ?? (await embeddedEmbedder());
  const resources = openEmbeddedResources(config, dataDir, embedder);
  const removeLogCheck = processMetrics().readiness.add('event log', () => resources.log.isOpen);
  const closeResources = () => {
    resources.close();
    removeLogCheck();
  };
  let app: INestApplicationContext;
  let moduleRef: ModuleRef | undefined;
  try {
    app = await NestFactory.createApplicationContext(
      engramRootModule([
        ConfigModule.forRoot(config),
        EmbeddedProvidersModule.forRoot(resources, {
          llm: options.llm === undefined ? config.llm : options.llm,
          review: options.review ?? null,
          timers: {
            sweepIntervalMs: options.sweepIntervalMs ?? config.segmenter.sweepIntervalMs,
            ...(options.reflector && { reflector: options.reflector }),
          },
          onCreated: (ref) => (moduleRef = ref),
        }),
      ]),
      // Errors reach the caller (no process abort); Nest's log lines as the caller's logger has.
      { abortOnError: false, logger: ['log', 'warn', 'error'] },
    );
  } catch (error) {
    // A service that failed to start stopped itself; those started before it stop here, then
    // the files close (Nest does not close a context whose start failed).
    if (moduleRef) await stopServices(moduleRef);
    closeResources();
    throw error;
  }
  const retrieval = withRecall(app, resources, config);
  const review = app.get(DistillerService).reviewServer;
  const metrics = await serveMetrics(options.metrics ?? null);
  return {
    log: resources.log,
    graph: resources.graph,
    segmenter: runningIn(app, SegmenterService),
    observer: runningIn(app, ObserverService),
    distiller: runningIn(app, DistillerService),
    retrieval,
    review,
    metrics,
    running: ENGRAM_SERVICE_NAMES,
    async stop() {
      await metrics?.stop();
      // The services stop (beforeApplicationShutdown), then the recall stack's pending access
      // counts are written, then the files close.
      await app.close();
      await retrieval.recall.access.close().catch(() => undefined);
      closeResources();
    },
  };
}

/** The running indexer and a recall stack on the store it writes (same model). */
function withRecall(
  app: INestApplicationContext,
  resources: EmbeddedResources,
  config: EngramConfig,
): RetrievalWithRecall & { store: SqliteRetrievalStore } {
  const running = runningIn(app, RetrievalIndexerService);
  // The indexer's backend itself: the recall stack shares its vector cache.
  const backend = app.get<RetrievalBackend>(RETRIEVAL_BACKEND);
  const recall = createRecallStack({
    backend,
    embedder: resources.embedder,
    ranking: config.ranking,
  });
  return { ...running, recall, embedder: resources.embedder, store: resources.store };
}

/** A started service's runtime (the context started them all, or failed). */
function runningIn<T>(
  app: INestApplicationContext,
  service: abstract new (...args: never[]) => { running: T | undefined },
): T {
  const running = app.get(service).running;
  if (running === undefined) throw new Error(`${service.name} did not start`);
  return running;
}

/** Each service's stop (a service that did not start, or stopped, does nothing). */
async function stopServices(moduleRef: ModuleRef): Promise<void> {
  for (const service of ENGRAM_SERVICES) {
    await moduleRef.get(service, { strict: false }).beforeApplicationShutdown();
  }
}
