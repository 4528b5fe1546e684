import type { Memory } from '@engram/contracts';
import { prunedReason } from './memory-history';

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
