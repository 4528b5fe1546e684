import type { Client } from '@elastic/elasticsearch';
import type { Embedder, LlmClient } from '@engram/ai';
import { recallProtoPath } from '@engram/contracts';
import {
  assertServable,
  type CoAccessReader,
  type RankingConfig,
  type TenantTokens,
} from '@engram/core';
import {
  AccessCounterMirror,
  BulkWriter,
  elasticsearchStoreWriter,
  createElasticsearchClient,
  retrievalIndexNames,
  type ElasticsearchIndexNames,
} from '@engram/elasticsearch';
import {
  Logger,
  Module,
  type DynamicModule,
  type INestMicroservice,
  type LogLevel,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Transport, type MicroserviceOptions } from '@nestjs/microservices';
import { ContextService } from './context.service';
import { EpisodeHistoryService } from './episode-history.service';
import { ImpactService } from './impact.service';
import { CO_ACCESS_READER, FileNeighborsGrpcController } from './file-neighbors.grpc.controller';
import { RecallGrpcController, TENANT_TOKENS } from './recall.grpc.controller';
import { RECALL_PROTO_LOADER_OPTIONS, RECALL_PROTO_PACKAGE } from './recall-proto';
import { ContextGrpcController, EpisodeHistoryGrpcController } from './recall-rpcs.grpc.controller';
import { RecallService } from './recall.service';
import {
  indexMemoryWith,
  recallStackOn,
  unindexMemoryWith,
  type RecallStack,
} from './recall-stack';
import { FeedbackGrpcController, RememberGrpcController } from './remember.grpc.controller';
import { FeedbackService, type PublishTombstones } from './feedback.service';
import { RememberService, type PublishRecords } from './remember.service';
import { RetrievalIndexer } from './retrieval-indexer';
import { ReviewQueueGrpcController } from './review-queue.grpc.controller';
import { ReviewQueueService } from './review-queue.service';
import { elasticsearchRecallStore } from './recall-store';
import { supersessionCandidatesIn } from './supersession-index';
import { addHealthAndReflection, listenOrExplain } from '@engram/grpc';

/** Where the recall API listens by default (loopback: expose it deliberately). */
export const DEFAULT_RECALL_GRPC_URL = '127.0.0.1:50051';

export type { RecallStack } from './recall-stack';

/** The recall services on the three indices of `client` (shared by gRPC and `engram recall`). */
export function createRecallStack(options: {
  client: Client;
  indices: ElasticsearchIndexNames;
  embedder: Embedder;
  /** EngramConfig.ranking (tests: DEFAULT_RANKING_CONFIG). */
  ranking: RankingConfig;
  /** The event log Remember publishes to (absent: Remember answers FAILED_PRECONDITION). */
  publish?: PublishRecords | null;
  /** Feedback's tombstones (publishTombstonesTo); absent: deleting answers FAILED_PRECONDITION. */
  publishTombstones?: PublishTombstones | null;
  /** The LLM of HyDE (hydeClientOf); absent: recall never uses HyDE. */
  hyde?: LlmClient | null;
  /** Access counters held in memory (a server's); absent: read from Elasticsearch each time. */
  counters?: AccessCounterMirror | null;
}): RecallStack {
  const { client, indices, embedder } = options;
  const store = elasticsearchRecallStore(client, indices, { counters: options.counters });
  // Remember and Feedback index at once: with supersession, so a person's newer fact demotes the
  // one it contradicts before the log's consumer gets there (nothing injects the older meanwhile).
  const indexer = new RetrievalIndexer(
    embedder,
    elasticsearchStoreWriter(BulkWriter.forClient(client), indices),
    supersessionCandidatesIn(store),
  );
  // The next search sees the write.
  const refresh = () => client.indices.refresh({ index: indices.memories });
  return recallStackOn(
    store,
    embedder,
    options.ranking,
    {
      publish: options.publish,
      publishTombstones: options.publishTombstones,
      indexMemory: indexMemoryWith(indexer, refresh),
      unindexMemory: unindexMemoryWith(indexer, refresh),
    },
    options.hyde ?? null,
  );
}

/** The Nest module of the gRPC server around existing recall services. */
@Module({})
export class RecallGrpcModule {
  static forStack(
    stack: RecallStack,
    tokens: TenantTokens | null,
    neighbours?: CoAccessReader,
  ): DynamicModule {
    return {
      module: RecallGrpcModule,
      controllers: [
        RecallGrpcController,
        ContextGrpcController,
        EpisodeHistoryGrpcController,
        RememberGrpcController,
        FeedbackGrpcController,
        ReviewQueueGrpcController,
        ...(neighbours ? [FileNeighborsGrpcController] : []),
      ],
      providers: [
        { provide: RecallService, useValue: stack.service },
        { provide: ContextService, useValue: stack.context },
        { provide: EpisodeHistoryService, useValue: stack.history },
        { provide: RememberService, useValue: stack.remember },
        { provide: FeedbackService, useValue: stack.feedback },
        { provide: ReviewQueueService, useValue: new ReviewQueueService(stack.store) },
        { provide: TENANT_TOKENS, useValue: tokens },
        ...(neighbours
          ? [
              { provide: CO_ACCESS_READER, useValue: neighbours },
              {
                provide: ImpactService,
                useValue: new ImpactService(neighbours, stack.store, stack.ranking),
              },
            ]
          : []),
      ],
    };
  }
}

export interface RecallGrpcServerOptions {
  /** host:port to listen on (default DEFAULT_RECALL_GRPC_URL). */
  url?: string;
  /**
   * Bearer token → tenants and role (grpcTokensOf(config)); null or absent: no authentication,
   * allowed on a loopback `url` only (start-up refuses any other address).
   */
  tokens?: TenantTokens | null;
  /** The observer graph, to serve GetFileNeighbors (absent: that rpc is UNIMPLEMENTED). */
  neighbours?: CoAccessReader;
  logger?: LogLevel[] | false;
}

/**
 * engram.recall.v1 (schemas/proto/engram/recall/v1/recall.proto) over the @nestjs/microservices
 * gRPC transport, around a stack on any store: Elasticsearch (distributed) or SQLite (embedded)
 * serve the same API on the same port.
 */
export async function serveRecallGrpc(
  stack: RecallStack,
  options: RecallGrpcServerOptions,
): Promise<{ app: INestMicroservice; url: string }> {
  const url = options.url ?? DEFAULT_RECALL_GRPC_URL;
  assertServable(url, options.tokens ?? null, 'engram.recall.v1');
  const app = await NestFactory.createMicroservice<MicroserviceOptions>(
    RecallGrpcModule.forStack(stack, options.tokens ?? null, options.neighbours),
    {
      transport: Transport.GRPC,
      options: {
        url,
        package: RECALL_PROTO_PACKAGE,
        protoPath: recallProtoPath(),
        loader: { ...RECALL_PROTO_LOADER_OPTIONS },
        onLoadPackageDefinition: addHealthAndReflection,
      },
      // Absent: the process's own log levels (Nest's logger setting is global, so a default
      // here would silence the services started beside this server).
      ...(options.logger !== undefined && { logger: options.logger }),
    },
  );
  await listenOrExplain(app, url, 'ENGRAM_RECALL_GRPC_URL');
  return { app, url };
}

export interface RecallServerOptions extends RecallGrpcServerOptions {
  elasticsearchUrl: string;
  /** The model whose id the indices store beside their vectors (the indexer's). */
  embedder: Embedder;
  /** Prefix of the three index names (lowercased), as the indexer's. */
  indexPrefix?: string;
  /** EngramConfig.ranking (tests: DEFAULT_RANKING_CONFIG). */
  ranking: RankingConfig;
  /** The event log Remember publishes to (absent: Remember answers FAILED_PRECONDITION). */
  publish?: PublishRecords | null;
  /** Feedback's tombstones (publishTombstonesTo); absent: deleting answers FAILED_PRECONDITION. */
  publishTombstones?: PublishTombstones | null;
  /** The LLM of HyDE (hydeClientOf); absent: recall never uses HyDE. */
  hyde?: LlmClient | null;
}

export interface RecallServerRuntime extends RecallStack {
  app: INestMicroservice;
  client: Client;
  indices: ElasticsearchIndexNames;
  url: string;
  /** Stops accepting calls, writes pending access counts, closes the Elasticsearch client. */
  stop(): Promise<void>;
}

/**
 * Serves engram.recall.v1 (schemas/proto/engram/recall/v1/recall.proto) over the
 * @nestjs/microservices gRPC transport on Elasticsearch (Remember and Feedback need `publish` and
 * `publishTombstones`; GetFileNeighbors and AnalyzeImpact need `neighbours`).
 */
export async function startRecallServer(
  options: RecallServerOptions,
): Promise<RecallServerRuntime> {
  const url = options.url ?? DEFAULT_RECALL_GRPC_URL;
  const indices = retrievalIndexNames(options.indexPrefix ?? '');
  const client = createElasticsearchClient(options.elasticsearchUrl);
  const logger = new Logger('RecallServer');
  // Loads in the background: until it has read every counter, recalls read them from Elasticsearch.
  const counters = new AccessCounterMirror(client, indices.memoryAccess, {
    onError: (message) => logger.warn(message),
  });
  void counters.start();
  const stack = createRecallStack({
    client,
    indices,
    counters,
    embedder: options.embedder,
    ranking: options.ranking,
    publish: options.publish,
    publishTombstones: options.publishTombstones,
    hyde: options.hyde ?? null,
  });
  try {
    const { app } = await serveRecallGrpc(stack, { ...options, url });
    logger.log(
      `engram.recall.v1 on ${url} over ${Object.values(indices).join(', ')} (${options.embedder.id})`,
    );
    return {
      ...stack,
      app,
      client,
      indices,
      url,
      async stop() {
        await app.close();
        await stack.access.close();
        await counters.close();
        await client.close();
      },
    };
  } catch (error) {
    await stack.access.close().catch(() => undefined);
    await counters.close();
    await client.close().catch(() => undefined);
    throw error;
  }
}
