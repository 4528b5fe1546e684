import type { RankingConfig } from './ranking-config';
import { maxRrfScore, reciprocalRankFusion, type RankedHit } from './rrf';
import { modelCosine, vectorMismatch, type ModelVector } from './model-vector';

/** Why a candidate's cosine is what it is. Only `computed` means a real comparison happened. */
export type CosineStatus =
  'computed' | 'no_query_vector' | 'no_document_vector' | 'model_mismatch' | 'dimension_mismatch';

export interface FusionInput {
  /** BM25 hits, best first. */
  bm25: readonly RankedHit[];
  /**
   * kNN hits, best first; null when the kNN search did not run (e.g. no query embedding). A hit
   * with a `similarity` needs no stored vector: that is its cosine with `query`.
   */
  knn: readonly RankedHit[] | null;
  /** The query embedding; null when none could be computed (lexical-only recall). */
  query: ModelVector | null;
  /** The stored vector of a candidate, if it has one. */
  vectorOf: (id: string) => ModelVector | null | undefined;
}

/** A candidate after fusion: its ranks, scores and relevance, before any document priors. */
export interface FusedCandidate {
  id: string;
  /** Raw BM25 score; 0 when not matched lexically. */
  bm25: number;
  /** 1-based; 0 when absent from the BM25 list. */
  bm25Rank: number;
  /** Exact cosine with the query in [-1, 1]; 0 unless `cosineStatus` is `computed`. */
  knn: number;
  /** 1-based; 0 when absent from the kNN list. */
  knnRank: number;
  cosineStatus: CosineStatus;
  /** Reciprocal rank fusion score. */
  fused: number;
  /** fused / the best possible fused score for the lists searched, in (0, 1]. */
  fusedNormalised: number;
  /** In [0, 1]; see `relevanceOf`. */
  relevance: number;
}

/**
 * Fuses BM25 and kNN candidates by reciprocal rank fusion, then computes the exact cosine of
 * every candidate — BM25-only ones included, so a lexical hit is also judged semantically — and
 * the relevance. A kNN hit's cosine is the one its index computed when it reports it
 * (`similarity`), else the one of its stored vector. Vectors of another model or dimension are
 * never compared (status `model_mismatch` / `dimension_mismatch`, cosine 0): during a re-index
 * old and new vectors coexist, and one stale document must not fail the whole query. Order: fused
 * descending, ties by id.
 */
export function fuseCandidates(input: FusionInput, config: RankingConfig): FusedCandidate[] {
  const lists = input.knn === null ? [input.bm25] : [input.bm25, input.knn];
  const best = maxRrfScore(lists.length, config.rrfK);
  const indexed = indexedSimilarities(input.knn);
  return reciprocalRankFusion(lists, config.rrfK).map((entry) => {
    const similarity = indexed.get(entry.id);
    const { knn, cosineStatus } =
      input.query !== null && similarity !== undefined
        ? { knn: clampCosine(similarity), cosineStatus: 'computed' as const }
        : exactCosine(input.query, input.vectorOf(entry.id));
    const fusedNormalised = Math.min(1, entry.fused / best);
    return {
      id: entry.id,
      bm25: entry.scores[0],
      bm25Rank: entry.ranks[0],
      knn,
      knnRank: entry.ranks[1] ?? 0,
      cosineStatus,
      fused: entry.fused,
      fusedNormalised,
      relevance: relevanceOf(fusedNormalised, knn, input.query !== null, config),
    };
  });
}

/**
 * Relevance: how well a document answers the query, in [0, 1], independent of the other
 * candidates (so a fixed threshold such as HyDE's 0.5 means the same on every query).
 *
 *   relevance = (mix.rrf · fusedNormalised + mix.cosine · max(0, cosine)) / (mix.rrf + mix.cosine)
 *
 * fusedNormalised is the RRF score divided by its maximum (rank 1 in every list searched), so it
 * rewards agreement between the lexical and the semantic ranking; the cosine says how close the
 * document is in absolute terms (a negative cosine is no similarity: 0). With no query vector
 * (lexical-only recall) nothing semantic is known for any candidate and relevance is
 * fusedNormalised alone; a candidate without a comparable vector, in a query that has one, gets
 * cosine 0 — it is not rewarded for missing an embedding.
 */
export function relevanceOf(
  fusedNormalised: number,
  cosine: number,
  hasQueryVector: boolean,
  config: RankingConfig,
): number {
  if (!hasQueryVector) return clampUnit(fusedNormalised);
  const { rrf, cosine: cosineWeight } = config.relevanceMix;
  return clampUnit(
    (rrf * fusedNormalised + cosineWeight * Math.max(0, cosine)) / (rrf + cosineWeight),
  );
}

function exactCosine(
  query: ModelVector | null,
  document: ModelVector | null | undefined,
): { knn: number; cosineStatus: CosineStatus } {
  if (query === null) return { knn: 0, cosineStatus: 'no_query_vector' };
  if (!document) return { knn: 0, cosineStatus: 'no_document_vector' };
  const mismatch = vectorMismatch(query, document);
  if (mismatch === 'model') return { knn: 0, cosineStatus: 'model_mismatch' };
  if (mismatch === 'dimension') return { knn: 0, cosineStatus: 'dimension_mismatch' };
  return { knn: modelCosine(query, document), cosineStatus: 'computed' };
}

/** The cosines the vector index reported for its hits, by id (the first hit of an id counts). */
function indexedSimilarities(knn: readonly RankedHit[] | null): Map<string, number> {
  const similarities = new Map<string, number>();
  for (const hit of knn ?? []) {
    if (hit.similarity !== undefined && !similarities.has(hit.id)) {
      similarities.set(hit.id, hit.similarity);
    }
  }
  return similarities;
}

/** An index's float32 arithmetic can land a hair outside [-1, 1]. */
function clampCosine(value: number): number {
  return Math.min(1, Math.max(-1, value));
}

function clampUnit(value: number): number {
  return Math.min(1, Math.max(0, value));
}
