import type { Memory } from '@engram/contracts';
import {
  resolveSupersession,
  SUPERSEDABLE_TYPES,
  SUPERSESSION_RULE,
  type RecallStore,
} from '@engram/core';
import { memoryFromSource, type MemoryDocument } from '@engram/core';
import type { DeliveredOrTombstone } from '@engram/core';

/**
 * Supersession where memories are indexed (issue #20): every memory of either mode reaches the
 * retrieval store through RetrievalIndexer.handleMemories, whoever wrote it (Remember, the
 * observer, the distiller, a commit's revision). Before a batch is written, each memory is
 * resolved against the project's memories most like it (same type, BM25 on its content, the
 * store's own search) and the batch's others (the core's `resolveSupersession`): the older ones
 * it contradicts are written again demoted (stale, `superseded-by:`), it gets its `supersedes`
 * relations, and it is demoted itself when a newer one already stored contradicts it — so the
 * order memories arrive in (a replay, a reindex) gives the same store.
 */

/** The project's stored memories a memory could supersede or be superseded by. */
export type SupersessionCandidates = (memory: Memory) => Promise<Memory[]>;

/** Candidates searched per memory: the project's most similar, then those of its type kept. */
export const SUPERSESSION_CANDIDATES = 20;

/**
 * The candidates of a memory on a recall store (Elasticsearch or SQLite): BM25 on its content in
 * its project, those of its type. The type is checked here, not as a store filter: on the
 * embedded store a filtered search leaves the in-memory lexical index (~1.4 ms a search at 10k
 * memories, against ~0.35 ms unfiltered).
 */
export function supersessionCandidatesIn(
  store: Pick<RecallStore, 'candidates'>,
): SupersessionCandidates {
  return async (memory) => {
    const found = await store.candidates<MemoryDocument>('memories', {
      scope: { tenantId: memory.tenantId, projectId: memory.projectId },
      text: memory.content,
      vector: null,
      filter: [],
      size: SUPERSESSION_CANDIDATES,
    });
    return [...found.sources.values()]
      .map((source) => memoryFromSource(source))
      .filter((candidate) => candidate.memoryType === memory.memoryType);
  };
}

/**
 * The batch as it is to be indexed: each memory as resolved, then the next versions of stored
 * memories it changed (after the batch, so the latest resolution of a memory is what is written).
 * Tombstones and memories of types nothing supersedes pass unchanged.
 */
export async function withSupersession(
  items: readonly DeliveredOrTombstone<Memory>[],
  candidatesOf: SupersessionCandidates,
): Promise<DeliveredOrTombstone<Memory>[]> {
  const written = new Map<string, Memory>();
  const inBatch = new Set<string>();
  for (const item of items) {
    const memory = item.event;
    if (memory === null || !SUPERSEDABLE_TYPES.has(memory.memoryType)) continue;
    inBatch.add(memory.memoryId);
    const candidates = new Map<string, Memory>();
    for (const stored of await candidatesOf(memory)) candidates.set(stored.memoryId, stored);
    for (const other of written.values()) {
      if (sameSubjectScope(other, memory)) candidates.set(other.memoryId, other);
    }
    const outcome = resolveSupersession(memory, [...candidates.values()], SUPERSESSION_RULE);
    written.set(memory.memoryId, outcome.memory);
    for (const next of outcome.updated) written.set(next.memoryId, next);
  }
  if (written.size === 0) return [...items];
  const resolved = items.map((item) =>
    item.event !== null && written.has(item.event.memoryId)
      ? { ...item, event: written.get(item.event.memoryId)! }
      : item,
  );
  const last = items[items.length - 1];
  const changedStored = [...written.values()].filter((m) => !inBatch.has(m.memoryId));
  return [
    ...resolved,
    ...changedStored.map((memory): DeliveredOrTombstone<Memory> => ({
      topic: last.topic,
      partition: last.partition,
      offset: last.offset,
      key: memory.memoryId,
      headers: undefined,
      event: memory,
    })),
  ];
}

function sameSubjectScope(a: Memory, b: Memory): boolean {
  return (
    a.memoryId !== b.memoryId &&
    a.tenantId === b.tenantId &&
    a.projectId === b.projectId &&
    a.memoryType === b.memoryType
  );
}
