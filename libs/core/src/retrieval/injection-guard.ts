import type { Memory } from '@engram/contracts';
import { isSuperseded } from '../memory/superseded';
import { isStale } from './stale';

/**
 * The retrieval-time guard of everything put in front of an agent without it asking (SPEC §7:
 * "stale memories are never injected proactively"; seed 002 §7 "Retrieval rule for stale
 * memories"): InjectForFile, BuildContext (hence SessionStart and the hook's context) and its
 * work state and recipes. One predicate, so every injection path in both modes (SQLite and
 * Elasticsearch stores, which only fetch) refuses the same memories. An explicit search still
 * shows them, penalised and prefixed (stale.ts).
 *
 * A memory is not injectable when it is stale (staleAt set: a file it names was deleted, or a
 * newer memory superseded it), carries the `superseded-by:` tag, or when another memory at hand
 * says it supersedes it. The last covers the window in which the newer memory is indexed but the
 * older one's demoted version is not yet (the indexer writes it after the batch; Elasticsearch
 * refreshes later): the candidates themselves already say which of them are outdated.
 */

export type InjectionBlock = 'stale' | 'superseded';

/** Ids the memories say they supersede (their `supersedes` relations to other memories). */
export function supersededIdsIn(
  memories: Iterable<Pick<Memory, 'memoryId' | 'relations'>>,
): Set<string> {
  const ids = new Set<string>();
  for (const memory of memories) {
    for (const relation of memory.relations ?? []) {
      if (
        relation.relationType === 'supersedes' &&
        relation.targetMemoryId !== null &&
        relation.targetMemoryId !== memory.memoryId
      ) {
        ids.add(relation.targetMemoryId);
      }
    }
  }
  return ids;
}

/** Why the memory may not be injected, or null when it may. */
export function injectionBlock(
  memory: Pick<Memory, 'memoryId' | 'staleAt' | 'tags'>,
  supersededIds: ReadonlySet<string> = NONE,
): InjectionBlock | null {
  if (isSuperseded(memory) || supersededIds.has(memory.memoryId)) return 'superseded';
  if (isStale(memory)) return 'stale';
  return null;
}

/** Whether the memory may be put in an agent's context unasked (see `injectionBlock`). */
export function mayInject(
  memory: Pick<Memory, 'memoryId' | 'staleAt' | 'tags'>,
  supersededIds: ReadonlySet<string> = NONE,
): boolean {
  return injectionBlock(memory, supersededIds) === null;
}

const NONE: ReadonlySet<string> = new Set();
