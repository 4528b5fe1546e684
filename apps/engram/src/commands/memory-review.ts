import { createEmbedder } from '@engram/ai';
import { embeddedEmbedder } from '@engram/app-retrieval';
import { ReviewRequestError } from '@engram/app-distiller';
import type { Memory } from '@engram/contracts';
import { InvalidRecallRequestError, isoDay, memoriesToReview, parseProposalId } from '@engram/core';
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

export interface MemoryReviewBackend {
  /** The tenants that have documents of the project (to default --tenant). */
  tenantsWithProject(projectId: string): Promise<string[]>;
  /** The project's memories waiting for review, newest first. */
  pending(scope: { tenantId: string; projectId: string }): Promise<Memory[]>;
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
          memoryId: request.memoryId,
          action: { approve: 'confirm', edit: 'correct', reject: 'delete' }[request.action],
          ...(request.action === 'edit' && {
            reason: 'inaccurate',
            correctedContent: request.text ?? '',
          }),
          ...(request.by !== null && { userId: request.by }),
        });
        return {
          memoryId: answer.memoryId,
          action: request.action,
          confidence: answer.confidence,
          deleted: answer.deleted,
          content: request.action === 'edit' ? (request.text ?? '') : memory.content,
        };
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

/** The queue for people, after the proposals: one line per memory, its id to decide with. */
export function formatMemoryReviews(memories: readonly Memory[]): string {
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
