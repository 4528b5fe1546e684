import { recallProtoPath } from '@engram/contracts';
import {
  assertServable,
  type CoAccessReader,
  type TenantTokens,
  type TopicTail,
} from '@engram/core';
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
import type { RecallStack } from './recall-stack';
import { FeedbackGrpcController, RememberGrpcController } from './remember.grpc.controller';
import { FeedbackService } from './feedback.service';
import { RememberService } from './remember.service';
import { ReviewQueueGrpcController } from './review-queue.grpc.controller';
import { ReviewQueueService } from './review-queue.service';
import { createRecallStack, type RecallStackOptions } from './retrieval-backend';
import { startSessionNoteTail, type LifecycleSource } from './session-note-tail';
import { addHealthAndReflection, listenOrExplain } from '@engram/grpc';

/** Where the recall API listens by default (loopback: expose it deliberately). */
export const DEFAULT_RECALL_GRPC_URL = '127.0.0.1:50051';

export type { RecallStack } from './recall-stack';

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

export interface RecallServerOptions extends RecallGrpcServerOptions, RecallStackOptions {
  /**
   * The log its session notes are a view of (startSessionNoteTail): with it, they survive a
   * restart, replicas share them and SessionEnded ends them; absent: Remember's own hold only.
   */
  lifecycle?: LifecycleSource | null;
}

export interface RecallServerRuntime extends RecallStack {
  app: INestMicroservice;
  url: string;
  /** Stops accepting calls and writes pending access counts; the backend stays the caller's. */
  stop(): Promise<void>;
}

/**
 * Serves engram.recall.v1 (schemas/proto/engram/recall/v1/recall.proto) over the
 * @nestjs/microservices gRPC transport on a backend, Elasticsearch or SQLite (Remember and
 * Feedback need `publish` and `publishTombstones`; GetFileNeighbors and AnalyzeImpact need
 * `neighbours`).
 */
export async function startRecallServer(
  options: RecallServerOptions,
): Promise<RecallServerRuntime> {
  const url = options.url ?? DEFAULT_RECALL_GRPC_URL;
  const stack = createRecallStack(options);
  let notesTail: TopicTail | undefined;
  try {
    if (options.lifecycle) {
      notesTail = await startSessionNoteTail({
        ...options.lifecycle,
        notes: stack.notes,
        embedder: options.embedder,
      });
    }
    const { app } = await serveRecallGrpc(stack, { ...options, url });
    new Logger('RecallServer').log(
      `engram.recall.v1 on ${url} over ${options.backend.description} (${options.embedder.id})`,
    );
    return {
      ...stack,
      app,
      url,
      async stop() {
        await app.close();
        await notesTail?.stop();
        await stack.access.close();
      },
    };
  } catch (error) {
    await notesTail?.stop().catch(() => undefined);
    await stack.access.close().catch(() => undefined);
    throw error;
  }
}
