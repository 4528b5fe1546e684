// When to merge a search index down to one segment (SPEC §7). An HNSW vector index is one graph
// per segment, and a kNN search walks every graph: at 100k memories in the 17 segments a bulk
// load leaves, Elasticsearch's kNN took ~4x longer than in one segment. Memories are written in
// bursts (a distillation, a replay, a re-index) and read all day, so an index that has been quiet
// for a while is merged once; writes restart the watch. Merging while writes go on would redo
// the work for every burst.

export interface IdleMergePolicy {
  /** No new writes for this long before a merge. */
  idleMs: number;
  /** Merge only an index with more segments than this. */
  maxSegments: number;
}

export const DEFAULT_IDLE_MERGE_POLICY: IdleMergePolicy = { idleMs: 60_000, maxSegments: 4 };

/** What the watcher saw of one index: its write counter and since when it has not moved. */
export interface IndexWatch {
  /** Documents written so far (Elasticsearch's `indexing.index_total` + `delete_total`). */
  writes: number;
  /** When `writes` was last seen to change (or first seen). */
  changedAt: number;
}

export interface IndexObservation {
  writes: number;
  segments: number;
  now: number;
}

/**
 * The next watch of an index and whether to merge it now: quiet for `idleMs` since its last
 * write, and more than `maxSegments` segments. After a merge the segment count drops, so a quiet
 * index is merged once, not at every look.
 */
export function idleMergeDecision(
  previous: IndexWatch | undefined,
  seen: IndexObservation,
  policy: IdleMergePolicy = DEFAULT_IDLE_MERGE_POLICY,
): { watch: IndexWatch; merge: boolean } {
  const changed = previous === undefined || previous.writes !== seen.writes;
  const watch = changed ? { writes: seen.writes, changedAt: seen.now } : previous;
  const quiet = seen.now - watch.changedAt >= policy.idleMs;
  return { watch, merge: quiet && seen.segments > policy.maxSegments };
}
