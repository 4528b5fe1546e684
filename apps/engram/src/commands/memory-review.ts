import { createEmbedder } from '@engram/ai';
import { embeddedEmbedder } from '@engram/app-retrieval';
import { ReviewRequestError } from '@engram/app-distiller';
import type { Memory } from '@engram/contracts';
import { InvalidRecallRequestError, isoDay, memoriesToReview, parseProposalId } from '@engram/core';
import { openRecallContextClient } from '../hook-context-grpc';
import { openMemoryLifecycle, storedMemories, type MemoryLifecycle } from './memory-lifecycle';

/**
 * The memory side of `engram review` (issue #20): the project's inferred memories flagged
 * `needsReview`, read from the retrieval store, and a person's decision on one through the
 * recall services' Feedback — approve is CONFIRM (user-verified, out of the queue), edit is
 * CORRECT with the person's text, reject is DELETE (a tombstone).
 */

export type MemoryDecisionAction = 'approve' | 'edit' | 'reject';

export interface MemoryDecision {
  memoryId: string;
  action: MemoryDecisionAction;
  /** After the decision; 0 for a rejected (deleted) memory. */
  confidence: number;
  deleted: boolean;
  /** The memory as it was reviewed. */
  content: string;
}

/** A queued memory as `engram review` shows it (a stored Memory, or a ListForReview item). */
export type MemoryToReview = Pick<
  Memory,
  'memoryId' | 'projectId' | 'memoryType' | 'content' | 'confidence' | 'source' | 'createdAt'
> & {
  /** Why it waits (ListForReview's reason); absent from the embedded store's listing. */
  reason?: string;
};

export interface MemoryReviewBackend {
  /** The tenants that have documents of the project (to default --tenant). */
  tenantsWithProject(projectId: string): Promise<string[]>;
  /** The project's memories waiting for review, newest first. */
  pending(scope: { tenantId: string; projectId: string }): Promise<MemoryToReview[]>;
  decide(request: {
    tenantId: string;
    projectId: string;
    memoryId: string;
    action: MemoryDecisionAction;
    text: string | null;
    by: string | null;
  }): Promise<MemoryDecision>;
  close(): Promise<void>;
}

/** Whether `engram review approve|edit|reject ID` names a memory rather than a proposal. */
export function namesMemory(id: string): boolean {
  return parseProposalId(id) === null;
}

/**
 * The backend on a memory lifecycle (embedded or distributed), opened when first needed:
 * listing opens it without an embedding model; a decision that writes a version (approve,
 * edit) loads the model the store's vectors are of, so the version is indexed with its vector.
 */
export function lifecycleMemoryReviews(options: {
  dataDir: string;
  distributed?: boolean;
}): MemoryReviewBackend {
  let opened: Promise<MemoryLifecycle> | null = null;
  let withModel = false;
  const open = async (model: boolean): Promise<MemoryLifecycle> => {
    if (opened !== null && (withModel || !model)) return opened;
    if (opened !== null) await (await opened).close();
    withModel = model;
    const embedder = !model
      ? undefined
      : options.distributed
        ? await createEmbedder()
        : await embeddedEmbedder({ warn: (message) => console.error(message) });
    opened = openMemoryLifecycle({
      ...options,
      clientId: 'engram-review',
      ...(embedder !== undefined && { embedder }),
    });
    return opened;
  };
  return {
    tenantsWithProject: async (projectId) => (await open(false)).tenantsWithProject(projectId),
    async pending(scope) {
      const lifecycle = await open(false);
      return memoriesToReview(await storedMemories(lifecycle.stack.store, scope, null));
    },
    async decide(request) {
      const lifecycle = await open(request.action !== 'reject');
      const scope = { tenantId: request.tenantId, projectId: request.projectId };
      const [memory] = await storedMemories(lifecycle.stack.store, scope, [request.memoryId]);
      if (memory === undefined) {
        throw new ReviewRequestError(
          'not-found',
          `no memory ${request.memoryId} in ${request.projectId}`,
        );
      }
      try {
        const answer = await lifecycle.stack.feedback.feedback({
          ...scope,
          ...feedbackOf(request),
        });
        return decisionOf(request, answer, memory.content);
      } catch (error) {
        if (error instanceof InvalidRecallRequestError) {
          throw new ReviewRequestError('invalid', error.message);
        }
        throw error;
      }
    },
    async close() {
      if (opened !== null) await (await opened).close();
    },
  };
}

/** How many queued memories `engram review` lists over gRPC (ListForReview pages). */
const GRPC_REVIEW_LIST_MAX = 1_000;
const GRPC_REVIEW_PAGE = 500;
/** Each call's deadline over gRPC. */
const GRPC_REVIEW_CALL_MS = 30_000;

/**
 * The backend on the recall gRPC API (distributed mode: no Elasticsearch or Kafka client in the
 * CLI): the queue through ListForReview, decisions through Feedback. The tenant is the one the
 * token allows (the server decides) unless --tenant names one.
 */
export function grpcMemoryReviews(url: string, token?: string): MemoryReviewBackend {
  const client = () =>
    openRecallContextClient({
      url,
      ...(token !== undefined && { token }),
      deadline: Date.now() + GRPC_REVIEW_CALL_MS,
    });
  const pending = async (scope: { tenantId: string; projectId: string }) => {
    const recall = await client();
    try {
      const queued: MemoryToReview[] = [];
      let pageToken = '';
      do {
        const page = await recall.listForReview({ ...scope, limit: GRPC_REVIEW_PAGE, pageToken });
        for (const m of page.memories) {
          queued.push({
            memoryId: m.memoryId,
            projectId: scope.projectId,
            memoryType: m.type as Memory['memoryType'],
            content: m.content,
            confidence: m.confidence,
            source: m.source as Memory['source'],
            createdAt: m.createdAtMs,
            reason: m.reason,
          });
        }
        pageToken = page.nextPageToken;
      } while (pageToken !== '' && queued.length < GRPC_REVIEW_LIST_MAX);
      return queued;
    } finally {
      recall.close();
    }
  };
  return {
    tenantsWithProject: () => Promise.resolve(['']),
    pending,
    async decide(request) {
      const scope = { tenantId: request.tenantId, projectId: request.projectId };
      const queued = (await pending(scope)).find((m) => m.memoryId === request.memoryId);
      const recall = await client();
      try {
        const { action, reason, ...rest } = feedbackOf(request);
        const answer = await recall.feedback({
          scope,
          ...rest,
          action: `FEEDBACK_ACTION_${upper(action)}`,
          ...(reason !== undefined && { reason: `CORRECTION_REASON_${upper(reason)}` }),
        });
        return decisionOf(request, answer, queued?.content ?? '');
      } catch (error) {
        const message = (error as Error).message;
        if (/INVALID_ARGUMENT .*no memory/.test(message)) {
          throw new ReviewRequestError('not-found', message);
        }
        if (/INVALID_ARGUMENT/.test(message)) throw new ReviewRequestError('invalid', message);
        throw error;
      } finally {
        recall.close();
      }
    },
    close: () => Promise.resolve(),
  };
}

/** The proto's enum names are the core's names in capitals (FEEDBACK_ACTION_CONFIRM, …). */
const upper = <S extends string>(name: S) => name.toUpperCase() as Uppercase<S>;

type DecisionRequest = Parameters<MemoryReviewBackend['decide']>[0];

/** A person's decision as Feedback: approve = CONFIRM, edit = CORRECT (inaccurate), reject = DELETE. */
function feedbackOf(request: DecisionRequest) {
  return {
    memoryId: request.memoryId,
    action: ({ approve: 'confirm', edit: 'correct', reject: 'delete' } as const)[request.action],
    ...(request.action === 'edit' && {
      reason: 'inaccurate' as const,
      correctedContent: request.text ?? '',
    }),
    ...(request.by !== null && { userId: request.by }),
  };
}

function decisionOf(
  request: DecisionRequest,
  answer: { memoryId: string; confidence: number; deleted: boolean },
  reviewed: string,
): MemoryDecision {
  return {
    memoryId: answer.memoryId,
    action: request.action,
    confidence: answer.confidence,
    deleted: answer.deleted,
    content: request.action === 'edit' ? (request.text ?? '') : reviewed,
  };
}

/** The queue for people, after the proposals: one line per memory, its id to decide with. */
export function formatMemoryReviews(memories: readonly MemoryToReview[]): string {
  const lines = [
    `# ${memories.length} inferred memor${memories.length === 1 ? 'y' : 'ies'} to review` +
      ' (approve ID: user-verified; reject ID: deleted)',
  ];
  for (const m of memories) {
    lines.push(
      `- [ ] \`${m.memoryId}\` ${m.projectId}: ${m.content} — ${m.memoryType}, ` +
        `confidence ${m.confidence.toFixed(2)}, ${m.source}; created ${isoDay(m.createdAt)}`,
    );
  }
  return lines.join('\n');
}

export function formatMemoryDecision(decision: MemoryDecision): string {
  if (decision.deleted) return `${decision.memoryId} rejected: deleted (${decision.content})`;
  const what = decision.action === 'edit' ? 'corrected and approved' : 'approved';
  return (
    `${decision.memoryId} ${what}: ${decision.content}\n` +
    `  → user-verified memory (confidence ${decision.confidence.toFixed(2)})`
  );
}
