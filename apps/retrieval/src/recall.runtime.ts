import type { Client } from '@elastic/elasticsearch';
import type { Embedder } from '@engram/ai';
import { recallProtoPath } from '@engram/contracts';
import {
  DEFAULT_RANKING_CONFIG,
  type CoAccessReader,
  type RankingConfig,
  type TenantTokens,
} from '@engram/core';
import {
  createElasticsearchClient,
  retrievalIndexNames,
  type RetrievalIndexNames,
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
import { AccessTracker } from './access-tracker';
import { CachingEmbedder } from './caching-embedder';
import { CO_ACCESS_READER, FileNeighborsGrpcController } from './file-neighbors.grpc.controller';
import {
  RecallGrpcController,
  RecallPendingRpcsController,
  TENANT_TOKENS,
} from './recall.grpc.controller';
import { RECALL_PROTO_LOADER_OPTIONS, RECALL_PROTO_PACKAGE } from './recall-proto';
import { RecallService } from './recall.service';
import { elasticsearchRecallStore } from './recall-store';

/** Where the recall API listens by default (loopback: expose it deliberately). */
export const DEFAULT_RECALL_GRPC_URL = '127.0.0.1:50051';

export interface RecallStack {
  service: RecallService;
  access: AccessTracker;
}

/**
 * RecallService on the three indices of `client`, with access tracking writing back to the
 * memories index. Shared by the gRPC server and `engram recall` (which closes `access` before
 * exiting so its counts are written). Queries are embedded through a small cache: agents repeat
 * themselves, and embedding is a third of a recall's time.
 */
export function createRecallStack(options: {
  client: Client;
  indices: RetrievalIndexNames;
  embedder: Embedder;
  ranking?: RankingConfig;
}): RecallStack {
  const ranking = options.ranking ?? DEFAULT_RANKING_CONFIG;
  const store = elasticsearchRecallStore(options.client, options.indices);
  const access = new AccessTracker((updates) => store.writeAccess(updates), ranking.access);
  const embedder = new CachingEmbedder(options.embedder, { maxEntries: 1024 });
  const service = new RecallService(store, embedder, { config: ranking, access });
  return { service, access };
}

/** The Nest module of the gRPC server around an existing RecallService. */
@Module({})
export class RecallGrpcModule {
  static forService(
    service: RecallService,
    tokens: TenantTokens | null,
    neighbours?: CoAccessReader,
  ): DynamicModule {
    return {
      module: RecallGrpcModule,
      controllers: [
        RecallGrpcController,
        RecallPendingRpcsController,
        ...(neighbours ? [FileNeighborsGrpcController] : []),
      ],
      providers: [
        { provide: RecallService, useValue: service },
        { provide: TENANT_TOKENS, useValue: tokens },
        ...(neighbours ? [{ provide: CO_ACCESS_READER, useValue: neighbours }] : []),
      ],
    };
  }
}

export interface RecallServerOptions {
  elasticsearchUrl: string;
  /** The model whose id the indices store beside their vectors (the indexer's). */
  embedder: Embedder;
  /** Prefix of the three index names (lowercased), as the indexer's. */
  indexPrefix?: string;
  /** host:port to listen on (default DEFAULT_RECALL_GRPC_URL). */
  url?: string;
  ranking?: RankingConfig;
  /** Bearer token → tenants; null or absent: requests name their tenant (trusted network). */
  tokens?: TenantTokens | null;
  /** The observer graph, to serve GetFileNeighbors (absent: that rpc is UNIMPLEMENTED). */
  neighbours?: CoAccessReader;
  logger?: LogLevel[] | false;
}

export interface RecallServerRuntime extends RecallStack {
  app: INestMicroservice;
  client: Client;
  indices: RetrievalIndexNames;
  url: string;
  /** Stops accepting calls, writes pending access counts, closes the Elasticsearch client. */
  stop(): Promise<void>;
}

/**
 * Serves engram.recall.v1 (schemas/proto/engram/recall/v1/recall.proto) over the
 * @nestjs/microservices gRPC transport: Recall on Elasticsearch, the other rpcs UNIMPLEMENTED.
 */
export async function startRecallServer(
  options: RecallServerOptions,
): Promise<RecallServerRuntime> {
  const url = options.url ?? DEFAULT_RECALL_GRPC_URL;
  const indices = retrievalIndexNames(options.indexPrefix ?? '');
  const client = createElasticsearchClient(options.elasticsearchUrl);
  const stack = createRecallStack({
    client,
    indices,
    embedder: options.embedder,
    ranking: options.ranking,
  });
  try {
    const app = await NestFactory.createMicroservice<MicroserviceOptions>(
      RecallGrpcModule.forService(stack.service, options.tokens ?? null, options.neighbours),
      {
        transport: Transport.GRPC,
        options: {
          url,
          package: RECALL_PROTO_PACKAGE,
          protoPath: recallProtoPath(),
          loader: { ...RECALL_PROTO_LOADER_OPTIONS },
        },
        logger: options.logger ?? ['warn', 'error'],
      },
    );
    await app.listen();
    new Logger('RecallServer').log(
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
        await client.close();
      },
    };
  } catch (error) {
    await stack.access.close().catch(() => undefined);
    await client.close().catch(() => undefined);
    throw error;
  }
}
