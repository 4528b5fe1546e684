import type { Memory } from '@engram/contracts';
import { supersededBy } from '../memory/superseded';

/**
 * An explicit search shows a superseded memory (SPEC §7: penalised and prefixed, so the agent can
 * see what used to be true), but never above the memory that replaced it: the stale penalty
 * halves its score, which is not enough when it matches the query twice as well as its
 * successor ("X talks to Y over A" asked "how does X talk to Y over A?"). Within a result list,
 * each superseded memory moves to just below its successor when both are in the list; everything
 * else keeps its order. The successor is the one its `superseded-by:` tag names, else one of the
 * list's memories whose `supersedes` relation names it. Chains (A by B by C) give C, B, A;
 * cycle-safe: members of a supersession cycle keep their original order.
 */
export function supersededAfterSuccessors<T>(
  items: readonly T[],
  memoryOf: (item: T) => Pick<Memory, 'memoryId' | 'tags' | 'relations'> | null,
): T[] {
  const idOf = (item: T) => memoryOf(item)?.memoryId ?? null;
  const listed = new Set(items.map(idOf).filter((id): id is string => id !== null));
  const successorOf = successors(items.map(memoryOf), listed);
  const emitted = new Set<string>();
  const waiting = new Map<string, T[]>();
  const out: T[] = [];
  const emit = (item: T): void => {
    out.push(item);
    const id = idOf(item);
    if (id === null) return;
    emitted.add(id);
    const followers = waiting.get(id) ?? [];
    waiting.delete(id);
    for (const follower of followers) emit(follower);
  };
  for (const item of items) {
    const id = idOf(item);
    const successor = id === null ? undefined : successorOf.get(id);
    if (successor === undefined || emitted.has(successor) || waitsOn(successor, id!, successorOf)) {
      emit(item);
    } else {
      waiting.set(successor, [...(waiting.get(successor) ?? []), item]);
    }
  }
  // Only items whose successor never came (impossible unless the list changed) remain.
  for (const followers of waiting.values()) out.push(...followers);
  return out;
}

/** Each listed memory's successor, when that successor is listed too. */
function successors(
  memories: readonly (Pick<Memory, 'memoryId' | 'tags' | 'relations'> | null)[],
  listed: ReadonlySet<string>,
): Map<string, string> {
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

/** Whether following successors from `start` comes back to `id` (a cycle: do not wait). */
function waitsOn(start: string, id: string, successorOf: ReadonlyMap<string, string>): boolean {
  const seen = new Set<string>();
  for (let at: string | undefined = start; at !== undefined; at = successorOf.get(at)) {
    if (at === id) return true;
    if (seen.has(at)) return false;
    seen.add(at);
  }
  return false;
}
