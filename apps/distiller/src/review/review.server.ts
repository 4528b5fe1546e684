import { assertServable, type StreamPlatform, type TenantTokens } from '@engram/core';
import {
  Logger,
  Module,
  type DynamicModule,
  type INestMicroservice,
  type LogLevel,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Transport, type MicroserviceOptions } from '@nestjs/microservices';
import { addHealthAndReflection, listenOrExplain } from '@engram/grpc';
import { distillerCodecs } from '../distiller-topics';
import type { DistillerTopics } from '../distiller-stage-options';
import { ReviewDesk, type ReviewDeskOptions } from './review-desk';
import { REVIEW_TENANT_TOKENS, ReviewGrpcController } from './review.grpc.controller';
import { REVIEW_PROTO_LOADER_OPTIONS, REVIEW_PROTO_PACKAGE, reviewProtoPath } from './review-proto';

/** The Nest module of the gRPC server around a ReviewDesk. */
@Module({})
export class ReviewGrpcModule {
  static forDesk(desk: ReviewDesk, tokens: TenantTokens | null): DynamicModule {
    return {
      module: ReviewGrpcModule,
      controllers: [ReviewGrpcController],
      providers: [
        { provide: ReviewDesk, useValue: desk },
        { provide: REVIEW_TENANT_TOKENS, useValue: tokens },
      ],
    };
  }
}

export interface ReviewServerOptions {
  desk: ReviewDesk;
  /** host:port (the distiller's setting, default 127.0.0.1:50052). */
  url: string;
  /**
   * Bearer token → tenants and role (grpcTokensOf(config)); null or absent: no authentication,
   * allowed on a loopback `url` only (start-up refuses any other address).
   */
  tokens?: TenantTokens | null;
  logger?: LogLevel[] | false;
}

export interface ReviewServer {
  app: INestMicroservice;
  url: string;
  stop(): Promise<void>;
}

/** Serves engram.review.v1 (schemas/proto/engram/review/v1/review.proto) over gRPC. */
export async function startReviewServer(options: ReviewServerOptions): Promise<ReviewServer> {
  assertServable(options.url, options.tokens ?? null, 'engram.review.v1');
  const app = await NestFactory.createMicroservice<MicroserviceOptions>(
    ReviewGrpcModule.forDesk(options.desk, options.tokens ?? null),
    {
      transport: Transport.GRPC,
      options: {
        url: options.url,
        package: REVIEW_PROTO_PACKAGE,
        protoPath: reviewProtoPath(),
        loader: { ...REVIEW_PROTO_LOADER_OPTIONS },
        onLoadPackageDefinition: addHealthAndReflection,
      },
      // Absent: the process's own log levels (Nest's logger setting is global, so a default
      // here would silence the services started beside this server).
      ...(options.logger !== undefined && { logger: options.logger }),
    },
  );
  await listenOrExplain(app, options.url, 'ENGRAM_REVIEW_GRPC_URL');
  new Logger('ReviewServer').log(`engram.review.v1 on ${options.url}`);
  return { app, url: options.url, stop: () => app.close() };
}

/**
 * engram.review.v1 beside the distiller, on the platform it runs on (either mode): a ReviewDesk
 * on the platform's event log records the decisions the distiller's reflector consumes.
 */
export async function startDistillerReview(
  platform: StreamPlatform,
  topics: DistillerTopics,
  {
    desk: deskOptions,
    ...options
  }: Omit<ReviewServerOptions, 'desk'> & { desk?: ReviewDeskOptions },
): Promise<ReviewServer> {
  const desk = new ReviewDesk(await platform.eventLog(), distillerCodecs(topics), deskOptions);
  return startReviewServer({ ...options, desk });
}
