import type { Memory } from '@engram/contracts';
import { prunedReason } from './memory-history';
import type { StoreFilter } from '../ports/recall-store.port';

/**
 * The review queue of inferred memories (issue #20, SPEC §6 feedback): the project's memories
 * flagged `needsReview` — inferred by the observer, or flagged wrong by a person — that nobody
 * confirmed yet, newest first (ties by id, so the order is stable). A person approves one
 * (Feedback CONFIRM: user-verified, out of the queue) or rejects it (Feedback DELETE).
 */
export function memoriesToReview(memories: readonly Memory[]): Memory[] {
  return memories
    .filter((m) => m.needsReview && !m.userVerified && prunedReason(m) === null)
    .sort((a, b) => b.createdAt - a.createdAt || a.memoryId.localeCompare(b.memoryId));
}

/**
 * The store filters of the queue (the store narrows, `memoriesToReview` decides): flagged
 * `needsReview` and not user-verified. Pruned memories are left to `memoriesToReview`.
 */
export const REVIEW_QUEUE_FILTERS: readonly StoreFilter[] = [
  { kind: 'flag', field: 'needsReview', value: true },
  { kind: 'flag', field: 'userVerified', value: false },
];

/** Why a queued memory waits for a person: the observer inferred it, or a person flagged it. */
export function reviewReason(memory: Pick<Memory, 'source'>): string {
  return memory.source === 'observer_inferred'
    ? 'inferred by the observer, not confirmed by anyone yet'
    : `flagged for review (${memory.source}): a person said it may be wrong`;
}
