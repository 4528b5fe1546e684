import { compareText } from './ordering';

/** One entry of a ranked candidate list, best first. `score` is the engine's own score. */
export interface RankedHit {
  id: string;
  score?: number;
  /**
   * kNN hits only: the cosine with the query vector that the vector index itself computed
   * (from the full-precision stored vector, the query's model and dimension — kNN searches
   * filter on both). The core uses it as the candidate's exact cosine, so a store need not ship
   * the vectors of its kNN hits back for the core to compare them again.
   */
  similarity?: number;
}

export interface RrfEntry {
  id: string;
  /** Σ over lists of 1 / (k + rank). */
  fused: number;
  /** 1-based rank in each list, in list order; 0 when absent from that list. */
  ranks: number[];
  /** The engine score from each list (0 when absent or not given). */
  scores: number[];
}

/**
 * Reciprocal rank fusion (Cormack, Clarke & Büttcher 2009): fused(d) = Σ_lists 1 / (k + rank_d).
 * It only uses ranks, so BM25 scores (unbounded) and cosine scores (bounded) combine without any
 * calibration. An id repeated within one list counts once, at its best rank. Entries come back in
 * fused-descending order, ties by id (code-unit order) so the result is deterministic.
 */
export function reciprocalRankFusion(
  lists: readonly (readonly RankedHit[])[],
  k: number,
): RrfEntry[] {
  if (!(k > 0) || !Number.isFinite(k)) throw new RangeError(`RRF k must be > 0, got ${k}`);
  const entries = new Map<string, RrfEntry>();
  lists.forEach((list, listIndex) => {
    const seen = new Set<string>();
    let rank = 0;
    for (const hit of list) {
      if (seen.has(hit.id)) continue;
      seen.add(hit.id);
      rank += 1;
      const entry = entries.get(hit.id) ?? newEntry(hit.id, lists.length);
      entry.ranks[listIndex] = rank;
      entry.scores[listIndex] = hit.score ?? 0;
      entry.fused += 1 / (k + rank);
      entries.set(hit.id, entry);
    }
  });
  return [...entries.values()].sort((a, b) => b.fused - a.fused || compareText(a.id, b.id));
}

/** The fused score of a document ranked first in every one of `listCount` lists. */
export function maxRrfScore(listCount: number, k: number): number {
  return listCount / (k + 1);
}

function newEntry(id: string, listCount: number): RrfEntry {
  return {
    id,
    fused: 0,
    ranks: new Array<number>(listCount).fill(0),
    scores: new Array<number>(listCount).fill(0),
  };
}
