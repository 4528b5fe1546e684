import { PROTO_LOADER_OPTIONS, recallProtoPath } from '@engram/contracts';
import type { recallv1 } from '@engram/grpc';
import {
  credentials,
  loadPackageDefinition,
  Metadata,
  type CallOptions,
  type requestCallback,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { ReviewGrpcClient } from '@engram/app-distiller';

// `engram mcp` is a thin client of the gRPC services `engram start` serves in both modes: the
// recall API (engram.recall.v1, config.recall.grpcUrl) and the review API (engram.review.v1,
// config.distiller.reviewGrpcUrl), with the same bearer token as every `engram` client
// (config.recall.token, ENGRAM_GRPC_TOKEN). A failed call rejects with the gRPC ServiceError
// itself (its `code` intact), which mcp-errors.ts turns into the tool's message.

/** Where the services listen and what to send them. */
export interface EngramGrpcEndpoints {
  recallUrl: string;
  reviewUrl: string;
  token?: string;
  /** Each call's deadline (default 30 s). */
  deadlineMs?: number;
}

/** The recall rpcs the MCP tools call, request in, answer out (camelCase, defaults filled in). */
export interface RecallRpcs {
  recall(request: recallv1.RecallRequest): Promise<recallv1.RecallResponse__Output>;
  buildContext(
    request: recallv1.BuildContextRequest,
  ): Promise<recallv1.BuildContextResponse__Output>;
  injectForFile(
    request: recallv1.InjectForFileRequest,
  ): Promise<recallv1.InjectForFileResponse__Output>;
  remember(request: recallv1.RememberRequest): Promise<recallv1.RememberResponse__Output>;
  feedback(request: recallv1.FeedbackRequest): Promise<recallv1.FeedbackResponse__Output>;
  getFileNeighbors(
    request: recallv1.GetFileNeighborsRequest,
  ): Promise<recallv1.GetFileNeighborsResponse__Output>;
  getEpisodeChain(
    request: recallv1.GetEpisodeChainRequest,
  ): Promise<recallv1.GetEpisodeChainResponse__Output>;
}

/** Both services: the recall rpcs and the review client (`engram review --grpc`'s). */
export interface EngramGrpc {
  recall: RecallRpcs;
  review: ReviewGrpcClient;
  close(): void;
}

const DEFAULT_DEADLINE_MS = 30_000;

/** Opens both clients; nothing connects until the first call. */
export function openEngramGrpc(endpoints: EngramGrpcEndpoints): EngramGrpc {
  const definition = loadSync(recallProtoPath(), { ...PROTO_LOADER_OPTIONS });
  const loaded = loadPackageDefinition(definition) as unknown as recallv1.ProtoGrpcType;
  const stub = new loaded.engram.recall.v1.Recall(
    endpoints.recallUrl,
    credentials.createInsecure(),
  );
  const deadlineMs = endpoints.deadlineMs ?? DEFAULT_DEADLINE_MS;
  const review = new ReviewGrpcClient(endpoints.reviewUrl, {
    ...(endpoints.token !== undefined && { token: endpoints.token }),
    deadlineMs,
  });

  function call<Res>(
    rpc: (metadata: Metadata, options: CallOptions, done: requestCallback<Res>) => void,
  ): Promise<Res> {
    const metadata = new Metadata();
    if (endpoints.token) metadata.set('authorization', `Bearer ${endpoints.token}`);
    return new Promise((resolve, reject) => {
      rpc(metadata, { deadline: Date.now() + deadlineMs }, (error, response) =>
        error ? reject(error) : resolve(response as Res),
      );
    });
  }

  const recall: RecallRpcs = {
    recall: (r) => call((m, o, done) => stub.Recall(r, m, o, done)),
    buildContext: (r) => call((m, o, done) => stub.BuildContext(r, m, o, done)),
    injectForFile: (r) => call((m, o, done) => stub.InjectForFile(r, m, o, done)),
    remember: (r) => call((m, o, done) => stub.Remember(r, m, o, done)),
    feedback: (r) => call((m, o, done) => stub.Feedback(r, m, o, done)),
    getFileNeighbors: (r) => call((m, o, done) => stub.GetFileNeighbors(r, m, o, done)),
    getEpisodeChain: (r) => call((m, o, done) => stub.GetEpisodeChain(r, m, o, done)),
  };
  return {
    recall,
    review,
    close() {
      stub.close();
      review.close();
    },
  };
}
