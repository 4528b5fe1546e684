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
 * needed to recompute it by hand); relevance dominates, the priors move it within a band
 * (hybrid-score.ts, priorFactors):
 *   prior = (w.recency·recency + w.frequency·frequency) / (w.recency + w.frequency)
 *   base  = relevance · (1 − share + share·prior)
 *   final = base · phaseWeight^phaseExponent · stalePenalty
 * `frequency` is the use evidence (a memory's confidence), not the access count.
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
  /** The half-life recency decayed by (days); null: the configured clock (recencyDecayDays). */
  halfLifeDays: number | null;
  recency: number;
  accessCount: number;
  /** The largest accessCount among the candidates scored together. */
  maxAccessCount: number;
  frequency: number;
  base: number;
  phase: UniversalPhase;
  memoryType: MemoryType | null;
  phaseWeight: number;
  /** phaseWeight^priors.phaseExponent: what the phase weight multiplies the score by. */
  phaseFactor: number;
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
  priors: { share: number } = { share: 0.1 },
): string {
  const type = score.memoryType ?? 'document';
  const relevanceSource =
    score.relevanceBasis === 'query'
      ? `rrf #${score.bm25Rank || '-'}/#${score.knnRank || '-'} → ${f(score.fusedNormalised)}, cosine ${f(score.knn)} (${score.cosineStatus ?? 'n/a'})`
      : 'confidence';
  return (
    `final ${f(score.finalScore)} = base ${f(score.base)} × phase ${f(score.phaseFactor)} ` +
    `(${score.phase}/${type} ${score.phaseWeight.toFixed(2)}, damped) × stale ${score.stalePenalty.toFixed(2)}; ` +
    `base = ${f(score.relevance)} (relevance: ${relevanceSource}) × (1 − ${priors.share} + ${priors.share}×prior); ` +
    `prior = ${weights.recency.toFixed(2)}×${f(score.recency)} (recency, ${score.daysSinceAccess.toFixed(1)} d${score.halfLifeDays === null ? '' : `, half-life ${score.halfLifeDays} d`}) + ` +
    `${weights.frequency.toFixed(2)}×${f(score.frequency)} (use: ${score.memoryType === null ? 'none known' : 'confidence'}; ${score.accessCount} returns, not ranked)` +
    (score.hyde ? '; via HyDE' : '') +
    (score.causalExpansion ? '; via causal expansion' : '')
  );
}

function f(value: number): string {
  return value.toFixed(4);
}
