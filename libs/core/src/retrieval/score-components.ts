import type { MemoryType } from '@engram/contracts';
import type { CosineStatus } from './fusion';
import type { UniversalPhase } from './universal-phase';

/**
 * Where relevance came from: `query` — fusion of BM25/kNN ranks and cosine; `confidence` — no
 * query (proactive injection, causal expansion), so the memory's own confidence stands in.
 */
export type RelevanceBasis = 'query' | 'confidence';

/**
 * Every part of a score, as computed (mirrors `ScoreComponents` of recall.proto, plus the inputs
 * needed to recompute it by hand):
 *   base  = w.relevance·relevance + w.recency·recency + w.frequency·frequency
 *   final = base · phaseWeight · stalePenalty
 */
export interface ScoreComponents {
  bm25: number;
  bm25Rank: number;
  /** Exact cosine with the query. */
  knn: number;
  knnRank: number;
  cosineStatus: CosineStatus | null;
  fused: number;
  fusedNormalised: number;
  relevance: number;
  relevanceBasis: RelevanceBasis;
  daysSinceAccess: number;
  recency: number;
  accessCount: number;
  /** The largest accessCount among the candidates scored together. */
  maxAccessCount: number;
  frequency: number;
  base: number;
  phase: UniversalPhase;
  memoryType: MemoryType | null;
  phaseWeight: number;
  /** 1 unless the memory is stale. */
  stalePenalty: number;
  finalScore: number;
  /** Found through a HyDE query. */
  hyde: boolean;
  /** Added by causal-chain expansion. */
  causalExpansion: boolean;
}

/**
 * One line a person can check with a calculator, e.g.
 * `final 1.0080 = base 0.6720 × phase 1.50 (implement/gotcha) × stale 1.00; base = 0.60×0.8000 (relevance) + …`.
 */
export function explainScore(
  score: ScoreComponents,
  weights: {
    relevance: number;
    recency: number;
    frequency: number;
  },
): string {
  const type = score.memoryType ?? 'document';
  const relevanceSource =
    score.relevanceBasis === 'query'
      ? `rrf #${score.bm25Rank || '-'}/#${score.knnRank || '-'} → ${f(score.fusedNormalised)}, cosine ${f(score.knn)} (${score.cosineStatus ?? 'n/a'})`
      : 'confidence';
  return (
    `final ${f(score.finalScore)} = base ${f(score.base)} × phase ${score.phaseWeight.toFixed(2)} ` +
    `(${score.phase}/${type}) × stale ${score.stalePenalty.toFixed(2)}; ` +
    `base = ${weights.relevance.toFixed(2)}×${f(score.relevance)} (relevance: ${relevanceSource}) + ` +
    `${weights.recency.toFixed(2)}×${f(score.recency)} (recency, ${score.daysSinceAccess.toFixed(1)} d) + ` +
    `${weights.frequency.toFixed(2)}×${f(score.frequency)} (frequency, ${score.accessCount}/${score.maxAccessCount})` +
    (score.hyde ? '; via HyDE' : '') +
    (score.causalExpansion ? '; via causal expansion' : '')
  );
}

function f(value: number): string {
  return value.toFixed(4);
}
