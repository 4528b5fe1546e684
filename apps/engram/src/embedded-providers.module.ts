import { SharedEmbedder, type Embedder } from '@engram/ai';
import {
  DISTILLER_LLM,
  OBSERVER_GRAPH,
  RETRIEVAL_BACKEND,
  REVIEW_API,
  SERVICE_TIMERS,
  STREAM_PLATFORM,
  type EngramConfig,
  type ReviewApiAddress,
  type ServiceTimers,
} from '@engram/config';
import {
  EmbeddedStreamPlatform,
  SqliteEventLog,
  SqliteObserverGraph,
  SqliteRetrievalStore,
} from '@engram/embedded';
import { Global, Module, type DynamicModule } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { sqliteBackend } from '@engram/app-retrieval';

/** What embedded mode runs on: the SQLite log, graph and store in the data directory. */
export interface EmbeddedResources {
  log: SqliteEventLog;
  graph: SqliteObserverGraph;
  store: SqliteRetrievalStore;
  platform: EmbeddedStreamPlatform;
  embedder: Embedder;
  close(): void;
}

/** Opens the data directory's log, graph and store (closed by `close`, after the services). */
export function openEmbeddedResources(
  config: EngramConfig,
  dataDir: string,
  embedder: Embedder,
): EmbeddedResources {
  const log = SqliteEventLog.open({ dataDir });
  let graph: SqliteObserverGraph | undefined;
  try {
    // One configuration for both modes: the same sections as the distributed services'.
    graph = SqliteObserverGraph.open({ dataDir, rule: config.observer });
    const store = SqliteRetrievalStore.open({ dataDir });
    const opened = graph;
    return {
      log,
      graph: opened,
      store,
      platform: new EmbeddedStreamPlatform(log),
      embedder,
      close() {
        store.close();
        opened.close();
        log.close();
      },
    };
  } catch (error) {
    graph?.close();
    log.close();
    throw error;
  }
}

const EMBEDDED_CONTEXT_CAPTURE = Symbol('EMBEDDED_CONTEXT_CAPTURE');

export interface EmbeddedProviderSettings {
  llm: EngramConfig['llm'];
  review: ReviewApiAddress | null;
  timers: ServiceTimers;
  /** Hands the caller the context's ModuleRef as soon as the providers exist (to stop the
   * services started before one that failed: Nest closes no context whose start failed). */
  onCreated?: (moduleRef: ModuleRef) => void;
}

/**
 * Embedded mode's providers of the services' tokens (issue #18): STREAM_PLATFORM on the SQLite
 * log, OBSERVER_GRAPH the SQLite graph, RETRIEVAL_BACKEND the SQLite store beside them, the
 * model or none as SharedEmbedder, and the caller's LLM, review API and timers. The caller
 * (startEmbeddedServices) opened the resources and closes them after the application context
 * closed, so they outlive every service.
 */
@Global()
@Module({})
export class EmbeddedProvidersModule {
  static forRoot(resources: EmbeddedResources, settings: EmbeddedProviderSettings): DynamicModule {
    const providers = [
      { provide: STREAM_PLATFORM, useValue: resources.platform },
      { provide: OBSERVER_GRAPH, useValue: resources.graph },
      { provide: RETRIEVAL_BACKEND, useValue: sqliteBackend(resources.store) },
      {
        provide: SharedEmbedder,
        useValue: new SharedEmbedder(() => Promise.resolve(resources.embedder)),
      },
      { provide: DISTILLER_LLM, useValue: settings.llm },
      { provide: REVIEW_API, useValue: settings.review },
      { provide: SERVICE_TIMERS, useValue: settings.timers },
    ];
    const capture = {
      provide: EMBEDDED_CONTEXT_CAPTURE,
      useFactory: (moduleRef: ModuleRef) => settings.onCreated?.(moduleRef) ?? true,
      inject: [ModuleRef],
    };
    return {
      module: EmbeddedProvidersModule,
      providers: [...providers, capture],
      exports: providers.map((provider) => provider.provide),
    };
  }
}
