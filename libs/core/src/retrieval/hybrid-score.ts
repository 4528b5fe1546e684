import type { MemoryType } from '@engram/contracts';
import type { FusedCandidate } from './fusion';
import { phaseWeight } from './phase-weights';
import type { RankingConfig } from './ranking-config';
import type { ScoreComponents } from './score-components';
import type { UniversalPhase } from './universal-phase';

const DAY_MS = 24 * 60 * 60 * 1000;

/** The document facts the priors need; memories, episodes and turns all map onto it. */
export interface ScoringSubject {
  id: string;
  /** null for episodes and turns: no phase-table entry, weight 1.0. */
  memoryType: MemoryType | null;
  /** Epoch millis; the recency clock. */
  lastAccessedAt: number;
  /**
   * Days after which the document's recency halves (a memory's own or its type's half-life,
   * memory/half-life.ts); absent or null: the configured clock, exp(−days / recencyDecayDays).
   */
  halfLifeDays?: number | null;
  accessCount: number;
  stale: boolean;
  /**
   * Evidence that the document is worth returning, in [0, 1], that no recall can move: a
   * memory's confidence (raised by a Feedback confirm, halved by "wrong"); 0.5 (no evidence either
   * way) for raw history. It is the prior's use term: a return is not a use, so accessCount
   * (which every tracked recall raises) is reported but never ranks (issue #23).
   */
  use: number;
}

/** Raw history (turns, episodes): no evidence of use either way. */
export const NEUTRAL_USE = 0.5;

/** What is known of a document's match to the query (or, without a query, its confidence). */
export type RelevanceInput =
  { basis: 'query'; fused: FusedCandidate } | { basis: 'confidence'; confidence: number };

export interface ScoringContext {
  phase: UniversalPhase;
  now: number;
  /** The largest accessCount among the candidates scored together. */
  maxAccessCount: number;
  hyde?: boolean;
  causalExpansion?: boolean;
}

/**
 * Whole days (fractional) since the last access. A lastAccessedAt after `now` (clock skew between
 * services) counts as 0 rather than a recency above 1.
 */
export function daysSince(lastAccessedAt: number, now: number): number {
  return Math.max(0, (now - lastAccessedAt) / DAY_MS);
}

/** exp(−days / decayDays): 1 for a memory used today, 1/e after `decayDays`. */
export function recencyScore(daysSinceAccess: number, decayDays: number): number {
  return Math.exp(-daysSinceAccess / decayDays);
}

/**
 * A document's recency: 0.5^(days / halfLifeDays) when it has a half-life (a work_state halves
 * every 7 days, a gotcha every 90), else the configured clock exp(−days / recencyDecayDays).
 * Either way in (0, 1] and only the prior's recency term: relevance still dominates.
 */
export function subjectRecency(
  daysSinceAccess: number,
  halfLifeDays: number | null | undefined,
  config: Pick<RankingConfig, 'recencyDecayDays'>,
): number {
  if (halfLifeDays === null || halfLifeDays === undefined) {
    return recencyScore(daysSinceAccess, config.recencyDecayDays);
  }
  return Math.pow(0.5, daysSinceAccess / halfLifeDays);
}

/**
 * log(1 + accessCount) / log(1 + maxCount), in [0, 1]: the most used candidate scores 1, and the
 * logarithm keeps a few heavily used memories from drowning the rest. With maxCount 0 nothing
 * has been used and every candidate scores 0 (instead of 0/0).
 */
export function frequencyScore(accessCount: number, maxCount: number): number {
  const count = sanitiseCount(accessCount);
  const max = sanitiseCount(maxCount);
  if (max === 0) return 0;
  return Math.min(1, Math.log1p(count) / Math.log1p(max));
}

/** The largest accessCount of the subjects (0 for none). */
export function maxAccessCount(subjects: Iterable<ScoringSubject>): number {
  let max = 0;
  for (const subject of subjects) max = Math.max(max, sanitiseCount(subject.accessCount));
  return max;
}

/** base and final score of one subject, with every component (SPEC §7). */
export function scoreSubject(
  subject: ScoringSubject,
  relevanceInput: RelevanceInput,
  context: ScoringContext,
  config: RankingConfig,
): ScoreComponents {
  const fused = relevanceInput.basis === 'query' ? relevanceInput.fused : null;
  const relevance =
    relevanceInput.basis === 'query'
      ? relevanceInput.fused.relevance
      : clampUnit(relevanceInput.confidence);
  const daysSinceAccess = daysSince(subject.lastAccessedAt, context.now);
  const halfLifeDays = validHalfLife(subject.halfLifeDays);
  const recency = subjectRecency(daysSinceAccess, halfLifeDays, config);
  const accessCount = sanitiseCount(subject.accessCount);
  const frequency = clampUnit(subject.use);
  const weight = phaseWeight(
    config.phaseWeights,
    context.phase,
    subject.memoryType,
    config.missingPhaseWeight,
  );
  const stalePenalty = subject.stale ? config.stale.penalty : 1;
  const { base, phaseFactor } = priorFactors(relevance, recency, frequency, weight, config);
  return {
    bm25: fused?.bm25 ?? 0,
    bm25Rank: fused?.bm25Rank ?? 0,
    knn: fused?.knn ?? 0,
    knnRank: fused?.knnRank ?? 0,
    cosineStatus: fused?.cosineStatus ?? null,
    fused: fused?.fused ?? 0,
    fusedNormalised: fused?.fusedNormalised ?? 0,
    relevance,
    relevanceBasis: relevanceInput.basis,
    daysSinceAccess,
    halfLifeDays,
    recency,
    accessCount,
    maxAccessCount: context.maxAccessCount,
    frequency,
    base,
    phase: context.phase,
    memoryType: subject.memoryType,
    phaseWeight: weight,
    phaseFactor,
    stalePenalty,
    finalScore: base * phaseFactor * stalePenalty,
    hyde: context.hyde ?? false,
    causalExpansion: context.causalExpansion ?? false,
  };
}

/**
 * Relevance first, priors within a band (issue #23): base = relevance · (1 − share + share ·
 * prior), prior = the recency and use terms weighted as hybrid.recency : hybrid.frequency, and the
 * phase weight damped to weight^phaseExponent. A document with no relevance scores 0 whatever
 * its priors, and the priors of two documents differ by at most the band.
 */
export function priorFactors(
  relevance: number,
  recency: number,
  use: number,
  phaseWeightValue: number,
  config: Pick<RankingConfig, 'hybrid' | 'priors'>,
): { prior: number; base: number; phaseFactor: number } {
  const { recency: wRecency, frequency: wUse } = config.hybrid;
  const total = wRecency + wUse;
  const prior = total > 0 ? (wRecency * recency + wUse * use) / total : 0;
  const { share, phaseExponent } = config.priors;
  return {
    prior,
    base: relevance * (1 - share + share * prior),
    phaseFactor: Math.pow(Math.max(0, phaseWeightValue), phaseExponent),
  };
}

/** A half-life that cannot be one (zero, negative, non-finite: a corrupt document) counts as none. */
function validHalfLife(days: number | null | undefined): number | null {
  return days !== null && days !== undefined && Number.isFinite(days) && days > 0 ? days : null;
}

/** Negative, fractional or non-finite counts (corrupt documents) count as what they can mean. */
function sanitiseCount(count: number): number {
  return Number.isFinite(count) && count > 0 ? Math.floor(count) : 0;
}

function clampUnit(value: number): number {
  return Number.isFinite(value) ? Math.min(1, Math.max(0, value)) : 0;
}
