import { PROTO_LOADER_OPTIONS, recallProtoPath } from '@engram/contracts';
import type { recallv1 } from '@engram/grpc';
import type { ContextItemKind, CheckedContextItem, InjectedMemory } from '@engram/core';
import type { MemoryType } from '@engram/contracts';
import type { Metadata, requestCallback } from '@grpc/grpc-js';

// `engram hook --distributed`'s memory source (issue #7, docs/claude-code-hooks.md): BuildContext
// and InjectForFile of the recall gRPC API (schemas/proto/engram/recall/v1/recall.proto) that
// `engram start --distributed` serves. Loaded by a dynamic import, only in distributed mode and
// only when a hook asks for context: @grpc/grpc-js, @grpc/proto-loader and the proto cost tens
// of milliseconds that no other hook should pay. The request and answer types are generated from
// the proto (`recallv1`, type-only: nothing of the retrieval app or libs/grpc is loaded here).

/** The hook's scope and what it asks about (the same inputs the embedded stack takes). */
export interface RecallContextScope {
  tenantId: string;
  projectId: string;
  sessionId: string;
}

export interface RecallContextClient {
  buildContext(
    input: RecallContextScope & { query: string },
  ): Promise<{ rendered: string; items: CheckedContextItem[] }>;
  injectForFile(
    input: RecallContextScope & { filePath: string; toolName: string },
  ): Promise<{ rendered: string; memories: InjectedMemory[] }>;
  /** ListForReview: a page of the project's memories flagged needsReview (issue #20). */
  listForReview(input: {
    tenantId: string;
    projectId: string;
    limit: number;
    pageToken?: string;
  }): Promise<recallv1.ListForReviewResponse__Output>;
  /** Feedback on one memory (a person's review decision). */
  feedback(input: recallv1.FeedbackRequest): Promise<recallv1.FeedbackResponse__Output>;
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
  const loaded = grpc.loadPackageDefinition(definition) as unknown as recallv1.ProtoGrpcType;
  const stub = new loaded.engram.recall.v1.Recall(options.url, grpc.credentials.createInsecure());
  const callOptions = { deadline: options.deadline };

  function call<R>(
    name: string,
    rpc: (metadata: Metadata, done: requestCallback<R>) => void,
  ): Promise<R | undefined> {
    const metadata = new grpc.Metadata();
    if (options.token) metadata.set('authorization', `Bearer ${options.token}`);
    return new Promise((resolve, reject) => {
      rpc(metadata, (error, response) => {
        if (error) {
          const code = grpc.status[error.code] ?? String(error.code);
          reject(new Error(`${name} at ${options.url}: ${code} ${error.details || error.message}`));
        } else resolve(response);
      });
    });
  }
  const context = async (answer: Promise<recallv1.BuildContextResponse__Output | undefined>) => {
    const response = await answer;
    return {
      rendered: response?.rendered ?? '',
      items: (response?.items ?? []).map(contextItemOf),
    };
  };
  const injection = async (answer: Promise<recallv1.InjectForFileResponse__Output | undefined>) => {
    const response = await answer;
    return {
      rendered: response?.rendered ?? '',
      memories: (response?.memories ?? []).flatMap(injectedMemoryOf),
    };
  };

  return {
    buildContext: ({ tenantId, projectId, sessionId, query }) =>
      context(
        call<recallv1.BuildContextResponse__Output>('BuildContext', (metadata, done) =>
          stub.BuildContext(
            { scope: { tenantId, projectId }, sessionId, query },
            metadata,
            callOptions,
            done,
          ),
        ),
      ),
    injectForFile: ({ tenantId, projectId, sessionId, filePath, toolName }) =>
      injection(
        call<recallv1.InjectForFileResponse__Output>('InjectForFile', (metadata, done) =>
          stub.InjectForFile(
            { scope: { tenantId, projectId }, sessionId, filePath, toolName },
            metadata,
            callOptions,
            done,
          ),
        ),
      ),
    async listForReview({ tenantId, projectId, limit, pageToken }) {
      const page = await call<recallv1.ListForReviewResponse__Output>(
        'ListForReview',
        (metadata, done) =>
          stub.ListForReview(
            { scope: { tenantId, projectId }, limit, pageToken: pageToken ?? '' },
            metadata,
            callOptions,
            done,
          ),
      );
      return { memories: page?.memories ?? [], nextPageToken: page?.nextPageToken ?? '' };
    },
    async feedback(request) {
      const answer = await call<recallv1.FeedbackResponse__Output>('Feedback', (metadata, done) =>
        stub.Feedback(request, metadata, callOptions, done),
      );
      if (answer === undefined) throw new Error(`Feedback at ${options.url}: no answer`);
      return answer;
    },
    close: () => stub.close(),
  };
}

/** A context item as the working-tree check and the core's renderer take it. */
export function contextItemOf(item: recallv1.ContextItem__Output): CheckedContextItem {
  return {
    citationId: item.citationId,
    // The proto's enum names the core's kinds (recall-rpcs-proto.ts contextItemKindToEnum).
    kind: item.kind.replace(/^CONTEXT_ITEM_KIND_/, '').toLowerCase() as ContextItemKind,
    text: item.text,
    relatedFiles: item.relatedFiles,
  };
}

/** An injected memory as the working-tree check and renderInjection take it. */
export function injectedMemoryOf(scored: recallv1.ScoredMemory__Output): InjectedMemory[] {
  const memory = scored.memory;
  if (memory === null) return [];
  return [
    {
      memory: {
        memoryId: memory.memoryId,
        memoryType: memory.type as MemoryType,
        relatedFiles: memory.relatedFiles,
      },
      content: memory.content,
    },
  ];
}
