import { PROTO_LOADER_OPTIONS, recallProtoPath } from '@engram/contracts';
import type { Client, Metadata, ServiceError } from '@grpc/grpc-js';
import type {
  buildContextResponse,
  BuildContextRequestMessage,
  injectForFileResponse,
  InjectForFileRequestMessage,
} from '@engram/app-retrieval';

// `engram hook --distributed`'s memory source (issue #7, docs/claude-code-hooks.md): BuildContext
// and InjectForFile of the recall gRPC API (schemas/proto/engram/recall/v1/recall.proto) that
// `engram start --distributed` serves. Loaded by a dynamic import, only in distributed mode and
// only when a hook asks for context: @grpc/grpc-js, @grpc/proto-loader and the proto cost tens
// of milliseconds that no other hook should pay. The request and answer shapes are the server's
// own (recall-rpcs-proto.ts, type-only: nothing of the retrieval app is loaded here).

/** The hook's scope and what it asks about (the same inputs the embedded stack takes). */
export interface RecallContextScope {
  tenantId: string;
  projectId: string;
  sessionId: string;
}

export interface RecallContextClient {
  buildContext(
    input: RecallContextScope & { query: string },
  ): Promise<Pick<ReturnType<typeof buildContextResponse>, 'rendered'>>;
  injectForFile(
    input: RecallContextScope & { filePath: string; toolName: string },
  ): Promise<Pick<ReturnType<typeof injectForFileResponse>, 'rendered'>>;
  close(): void;
}

export interface RecallContextClientOptions {
  /** host:port of the recall API (config.recall.grpcUrl). */
  url: string;
  /** Sent as `authorization: Bearer <token>` (config.recall.token). */
  token?: string;
  /** Epoch ms: every call's gRPC deadline (the hook's context budget). */
  deadline: number;
}

type Unary<Req, Res> = (
  request: Req,
  metadata: Metadata,
  options: { deadline: number },
  callback: (error: ServiceError | null, response: Res) => void,
) => void;

interface RecallStub extends Client {
  BuildContext: Unary<BuildContextRequestMessage, { rendered?: string }>;
  InjectForFile: Unary<InjectForFileRequestMessage, { rendered?: string }>;
}

/**
 * A client of the two proactive rpcs. Opening connects nothing (the channel connects on the
 * first call); each call fails fast with UNAVAILABLE when nothing listens, and with
 * DEADLINE_EXCEEDED at `deadline` when the server is slow: the hook fails open either way.
 */
export async function openRecallContextClient(
  options: RecallContextClientOptions,
): Promise<RecallContextClient> {
  const [grpc, { loadSync }] = await Promise.all([
    import('@grpc/grpc-js'),
    import('@grpc/proto-loader'),
  ]);
  const definition = loadSync(recallProtoPath(), { ...PROTO_LOADER_OPTIONS });
  const loaded = grpc.loadPackageDefinition(definition) as unknown as {
    engram: {
      recall: {
        v1: { Recall: new (url: string, credentials: unknown, options?: object) => RecallStub };
      };
    };
  };
  const stub = new loaded.engram.recall.v1.Recall(options.url, grpc.credentials.createInsecure());

  function call<Req, Res extends { rendered?: string }>(
    rpc: Unary<Req, Res>,
    name: string,
    request: Req,
  ): Promise<{ rendered: string }> {
    const metadata = new grpc.Metadata();
    if (options.token) metadata.set('authorization', `Bearer ${options.token}`);
    return new Promise((resolve, reject) => {
      rpc.call(stub, request, metadata, { deadline: options.deadline }, (error, response) => {
        if (error) {
          const code = grpc.status[error.code] ?? String(error.code);
          reject(new Error(`${name} at ${options.url}: ${code} ${error.details || error.message}`));
        } else resolve({ rendered: response.rendered ?? '' });
      });
    });
  }

  return {
    buildContext: ({ tenantId, projectId, sessionId, query }) =>
      call(stub.BuildContext, 'BuildContext', {
        scope: { tenantId, projectId },
        sessionId,
        query,
      }),
    injectForFile: ({ tenantId, projectId, sessionId, filePath, toolName }) =>
      call(stub.InjectForFile, 'InjectForFile', {
        scope: { tenantId, projectId },
        sessionId,
        filePath,
        toolName,
      }),
    close: () => stub.close(),
  };
}
