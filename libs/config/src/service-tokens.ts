import { Global, Module } from '@nestjs/common';
import { ENGRAM_CONFIG } from './config.module';
import type { EngramConfig } from './engram-config';
import { grpcTokensOf } from './grpc-tokens';

/*
 * The injection tokens of the services' providers (issue #18, "one topology per service"): every
 * service module injects these and starts its one topology the same way; the mode chooses who
 * provides them — distributed: Kafka, Neo4j, Elasticsearch; embedded: the SQLite log, graph and
 * store in the data directory. The embedder is `SharedEmbedder` (@engram/ai), a class token.
 */

/** The StreamPlatform (@engram/core) every topology runs on: event log, processors, topic admin. */
export const STREAM_PLATFORM = Symbol('STREAM_PLATFORM');
/** The observer's graph: an ObserverGraphWriter (@engram/core). */
export const OBSERVER_GRAPH = Symbol('OBSERVER_GRAPH');
/** The retrieval indexer's RetrievalBackend (@engram/app-retrieval). */
export const RETRIEVAL_BACKEND = Symbol('RETRIEVAL_BACKEND');
/** The LLM endpoint of the distiller and the segmenter's continuity check: EngramConfig['llm']. */
export const DISTILLER_LLM = Symbol('DISTILLER_LLM');
/** Where the review API is served: a ReviewApiAddress, or null for none. */
export const REVIEW_API = Symbol('REVIEW_API');
/** Optional: shorter timers for the demo and tests (ServiceTimers); absent, the configured ones. */
export const SERVICE_TIMERS = Symbol('SERVICE_TIMERS');

export interface ReviewApiAddress {
  url: string;
  tokens: ReturnType<typeof grpcTokensOf>;
}

export interface ServiceTimers {
  /** Every service's sweep interval (idle episodes, waiting lifecycle events, joins). */
  sweepIntervalMs?: number;
  /** The reflector's clock and quiet period. */
  reflector?: { clock?: () => number; quietMs?: number };
}

/**
 * The configured LLM and review API address (ENGRAM_LLM_*, ENGRAM_REVIEW_GRPC_URL and the tokens
 * file), as distributed mode and the services' own mains provide them. Global, as the other
 * provider modules: the root module imports it once for every service module.
 */
@Global()
@Module({
  providers: [
    {
      provide: DISTILLER_LLM,
      useFactory: (config: EngramConfig) => config.llm,
      inject: [ENGRAM_CONFIG],
    },
    {
      provide: REVIEW_API,
      // Read at start-up: a bad tokens file stops it before anything connects.
      useFactory: (config: EngramConfig): ReviewApiAddress => ({
        url: config.distiller.reviewGrpcUrl,
        tokens: grpcTokensOf(config),
      }),
      inject: [ENGRAM_CONFIG],
    },
  ],
  exports: [DISTILLER_LLM, REVIEW_API],
})
export class ConfiguredServiceSettingsModule {}
