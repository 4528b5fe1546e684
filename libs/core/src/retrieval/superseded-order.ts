import type { Memory } from '@engram/contracts';
import { supersededBy } from '../memory/superseded';

/** What the successor of a listed memory is read from. */
export type SuccessionView = Pick<Memory, 'memoryId' | 'tags' | 'relations'>;

/**
 * Each listed memory's successor, when that successor is listed too (a result list knows only
 * its own members). The successor is the one its `superseded-by:` tag names, else one of the
 * list's memories whose `supersedes` relation names it. Null entries (results that are not
 * memories) are skipped.
 */
export function listedSuccessors(
  memories: readonly (SuccessionView | null)[],
): Map<string, string> {
  const listed = new Set(memories.flatMap((memory) => (memory === null ? [] : [memory.memoryId])));
  const out = new Map<string, string>();
  for (const memory of memories) {
    if (memory === null) continue;
    for (const relation of memory.relations ?? []) {
      const target = relation.targetMemoryId;
      if (relation.relationType !== 'supersedes' || target === null) continue;
      if (target !== memory.memoryId && listed.has(target)) out.set(target, memory.memoryId);
    }
  }
  for (const memory of memories) {
    const by = memory === null ? null : supersededBy(memory);
    if (memory !== null && by !== null && by !== memory.memoryId && listed.has(by)) {
      out.set(memory.memoryId, by);
    }
  }
  return out;
}

/**
 * The end of the succession chain from `id` (A by B by C gives C for A and B); `id` itself when it
 * has no listed successor. Null when the chain runs into a cycle: a cycle has no current end.
 */
export function latestSuccessor(
  id: string,
  successorOf: ReadonlyMap<string, string>,
): string | null {
  const seen = new Set<string>();
  let at = id;
  for (let next = successorOf.get(at); next !== undefined; next = successorOf.get(at)) {
    seen.add(at);
    if (seen.has(next)) return null;
    at = next;
  }
  return at;
}
