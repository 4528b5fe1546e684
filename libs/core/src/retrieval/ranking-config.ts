import type { MemoryType } from '@engram/contracts';
import type { ContextItemKind } from './context-types';
import { PHASE_WEIGHTS, type PhaseWeightTable } from './phase-weights';
import { validateRankingConfig } from './ranking-config-validation';
import { UNIVERSAL_PHASES } from './universal-phase';

/**
 * SPEC §7's `base = relevance·w + recency·w + frequency·w` until issue #23; now only the ratio
 * recency : frequency counts (the prior, see PriorsConfig), and `relevance` no longer weighs:
 * relevance multiplies the prior factor instead of competing with it.
 */
export interface HybridWeights {
  relevance: number;
  recency: number;
  frequency: number;
}

/** How `relevance` mixes the normalised RRF score and the exact cosine (see fusion.ts). */
export interface RelevanceMix {
  rrf: number;
  cosine: number;
}

export interface StaleConfig {
  /** Multiplies a stale memory's confidence and its final score (explicit search only). */
  penalty: number;
  /** Prepended to a stale memory's content. */
  prefix: string;
}

export interface InjectionConfig {
  types: readonly MemoryType[];
  maxResults: number;
  minConfidence: number;
  /** Unless userVerified, a memory must have been returned at least this often. */
  minAccessCount: number;
  /** Tool names whose file argument triggers injection. */
  tools: readonly string[];
}

export interface CausalConfig {
  /** Co-access edges must weigh strictly more than this. */
  minEdgeWeight: number;
  maxFiles: number;
  types: readonly MemoryType[];
  maxMemories: number;
}

export interface HydeConfig {
  /** HyDE runs when fewer than this many results have relevance above `strongRelevance`. */
  minStrongResults: number;
  strongRelevance: number;
  queryWeight: number;
  hypotheticalWeight: number;
}

export interface SequenceConfig {
  /** Episodes need relevance strictly above this (seed 003: 0.5). */
  minRelevance: number;
  /** Fetch limit × this many candidates, then filter and sort chronologically. */
  overFetchFactor: number;
  defaultLimit: number;
  replayDefaultLimit: number;
}

export interface ContextConfig {
  defaultTokenBudget: number;
  /** Token estimate = ceil(characters / charsPerToken); see token-estimate.ts. */
  charsPerToken: number;
  /** A single item longer than this is clipped, so one pasted log cannot eat the budget. */
  maxItemTokens: number;
  maxThreadTurns: number;
  /** Linked episodes pulled for implicit channels (seed 004: aggressive cross-thread pulling). */
  maxCrossThreadEpisodes: number;
  /** For explicit channels (seed 004 §6.3: context from the current thread only). */
  explicitChannelCrossThreadEpisodes: number;
  maxMemories: number;
  maxRecipes: number;
  /** Which kinds get the budget first. */
  priority: readonly ContextItemKind[];
  /** The order sections appear in the rendered text. */
  displayOrder: readonly ContextItemKind[];
}

export interface AccessConfig {
  /** Flush when this many distinct memories wait. */
  maxPendingIds: number;
  /** Flush when the oldest waiting access is this old. */
  maxAgeMs: number;
}

/**
 * How far the priors (recency, use, phase) may move a document against its relevance (issue #23:
 * relevance must dominate). final = relevance · (1 − share + share · prior) · phaseWeight^phaseExponent
 * · stale, prior in [0, 1]: with share 0.1 the prior moves a score by at most 10 %, and with
 * exponent 0.25 the phase table (0.3–1.5) by at most (1.5 / 0.3)^0.25 ≈ ×1.50; together at most
 * ≈ ×1.66 between the most and the least favoured document, so they reorder near-ties and never
 * lift a document of 60 % of another's relevance over it (stale memories are halved on top).
 */
export interface PriorsConfig {
  share: number;
  phaseExponent: number;
}

/**
 * Recall across tiers (recall-merge.ts): relevance is recomputed on one scale for every tier, the
 * per-tier rank fusion mixed with the query-term coverage of the document's own text (IDF over
 * the candidates of all tiers), which a tier's rank alone cannot give: the best of a weak tier
 * ranks first in it. Coverage is lexical, 0 for a paraphrase: a document's semantic reading (its
 * cosine and that cosine's rank among all candidates) is a floor coverage cannot pull it below.
 */
export interface CrossTierConfig {
  /** Weight of the query-term coverage against the tier's fused rank (with or without kNN). */
  coverage: number;
  /** A memory is shown for its group over a raw member scoring at most this much higher. */
  memoryBand: number;
}

/** Every weight and constant of retrieval, in one place (SPEC §7, seed 002 §7). */
export interface RankingConfig {
  /** Reciprocal rank fusion constant: score = Σ 1 / (k + rank). */
  rrfK: number;
  hybrid: HybridWeights;
  relevanceMix: RelevanceMix;
  /**
   * recency = exp(−daysSinceAccess / recencyDecayDays) for a document without a half-life (episodes,
   * turns, memory types the seed gives none); a memory with one decays as 0.5^(days / half-life)
   * instead (memory/half-life.ts).
   */
  recencyDecayDays: number;
  phaseWeights: PhaseWeightTable;
  /** Weight of a type a phase row does not list. */
  missingPhaseWeight: number;
  stale: StaleConfig;
  injection: InjectionConfig;
  causal: CausalConfig;
  hyde: HydeConfig;
  sequence: SequenceConfig;
  context: ContextConfig;
  access: AccessConfig;
  priors: PriorsConfig;
  crossTier: CrossTierConfig;
}

export const DEFAULT_RANKING_CONFIG: Readonly<RankingConfig> = Object.freeze({
  // Not the RRF paper's 60 (Cormack, Clarke & Büttcher 2009; Elasticsearch's rank_constant):
  // at 60 the 10th result of both lists keeps 87 % of the top fused score, so the top of the
  // ranking is flat. On the retrieval-quality bench (test/bench/retrieval-quality) k = 20 makes
  // the fusion beat BM25 and kNN alone on recall@5, recall@10 and nDCG@10; 5–20 are within noise.
  rrfK: 20,
  hybrid: Object.freeze({ relevance: 0.6, recency: 0.25, frequency: 0.15 }),
  // Rank agreement and semantic closeness count equally: RRF alone cannot tell a strong match
  // from the best of a weak lot, the cosine alone ignores exact lexical hits (ids, error codes).
  relevanceMix: Object.freeze({ rrf: 0.5, cosine: 0.5 }),
  recencyDecayDays: 30,
  phaseWeights: PHASE_WEIGHTS,
  missingPhaseWeight: 1.0,
  // The seeds name a penalty but no size; halving keeps a stale memory findable but below any
  // fresh memory of similar standing.
  stale: Object.freeze({ penalty: 0.5, prefix: '[STALE — file no longer exists]' }),
  injection: Object.freeze({
    types: Object.freeze(['gotcha', 'error_pattern', 'dead_end', 'e2e_observation'] as const),
    maxResults: 4,
    minConfidence: 0.65,
    minAccessCount: 2,
    tools: Object.freeze(['Read', 'Edit']),
  }),
  causal: Object.freeze({
    minEdgeWeight: 0.6,
    maxFiles: 5,
    types: Object.freeze(['gotcha', 'pattern', 'error_pattern', 'dead_end'] as const),
    maxMemories: 5,
  }),
  hyde: Object.freeze({
    minStrongResults: 3,
    strongRelevance: 0.5,
    queryWeight: 0.4,
    hypotheticalWeight: 0.6,
  }),
  sequence: Object.freeze({
    minRelevance: 0.5,
    overFetchFactor: 2,
    defaultLimit: 10,
    replayDefaultLimit: 5,
  }),
  context: Object.freeze({
    defaultTokenBudget: 2000,
    charsPerToken: 4,
    maxItemTokens: 300,
    maxThreadTurns: 20,
    maxCrossThreadEpisodes: 3,
    explicitChannelCrossThreadEpisodes: 0,
    maxMemories: 10,
    maxRecipes: 2,
    // The live conversation first, then where the work stands, then continuity, then the
    // procedural and long-term knowledge that fills what is left.
    priority: Object.freeze([
      'current_thread',
      'work_state',
      'cross_thread_episode',
      'workflow_recipe',
      'memory',
    ] as const),
    // Read top-down like seed 004 §3.3: continuity first, the live thread last (nearest the
    // question).
    displayOrder: Object.freeze([
      'cross_thread_episode',
      'work_state',
      'workflow_recipe',
      'memory',
      'current_thread',
    ] as const),
  }),
  access: Object.freeze({ maxPendingIds: 500, maxAgeMs: 5_000 }),
  priors: Object.freeze({ share: 0.1, phaseExponent: 0.25 }),
  crossTier: Object.freeze({ coverage: 0.5, memoryBand: 0.85 }),
});

type SectionOverrides<T> = { [K in keyof T]?: T[K] };

/** Overrides of any leaf; phase weights merge per row (unlisted rows and cells keep defaults). */
export type RankingConfigOverrides = {
  rrfK?: number;
  recencyDecayDays?: number;
  missingPhaseWeight?: number;
  hybrid?: SectionOverrides<HybridWeights>;
  relevanceMix?: SectionOverrides<RelevanceMix>;
  phaseWeights?: { [P in keyof PhaseWeightTable]?: PhaseWeightTable[P] };
  stale?: SectionOverrides<StaleConfig>;
  injection?: SectionOverrides<InjectionConfig>;
  causal?: SectionOverrides<CausalConfig>;
  hyde?: SectionOverrides<HydeConfig>;
  sequence?: SectionOverrides<SequenceConfig>;
  context?: SectionOverrides<ContextConfig>;
  access?: SectionOverrides<AccessConfig>;
  priors?: SectionOverrides<PriorsConfig>;
  crossTier?: SectionOverrides<CrossTierConfig>;
};

/**
 * The defaults with `overrides` applied, validated. Throws MisconfigurationError naming the key
 * (a bad weight must fail at start-up, not silently reorder every recall).
 */
export function rankingConfig(overrides: RankingConfigOverrides = {}): RankingConfig {
  const d = DEFAULT_RANKING_CONFIG;
  const config: RankingConfig = {
    rrfK: overrides.rrfK ?? d.rrfK,
    recencyDecayDays: overrides.recencyDecayDays ?? d.recencyDecayDays,
    missingPhaseWeight: overrides.missingPhaseWeight ?? d.missingPhaseWeight,
    hybrid: { ...d.hybrid, ...overrides.hybrid },
    relevanceMix: { ...d.relevanceMix, ...overrides.relevanceMix },
    phaseWeights: mergePhaseWeights(d.phaseWeights, overrides.phaseWeights),
    stale: { ...d.stale, ...overrides.stale },
    injection: { ...d.injection, ...overrides.injection },
    causal: { ...d.causal, ...overrides.causal },
    hyde: { ...d.hyde, ...overrides.hyde },
    sequence: { ...d.sequence, ...overrides.sequence },
    context: { ...d.context, ...overrides.context },
    access: { ...d.access, ...overrides.access },
    priors: { ...d.priors, ...overrides.priors },
    crossTier: { ...d.crossTier, ...overrides.crossTier },
  };
  validateRankingConfig(config);
  return config;
}

function mergePhaseWeights(
  base: PhaseWeightTable,
  overrides: RankingConfigOverrides['phaseWeights'],
): PhaseWeightTable {
  if (overrides === undefined) return base;
  const merged = {} as Record<keyof PhaseWeightTable, PhaseWeightTable[keyof PhaseWeightTable]>;
  for (const phase of UNIVERSAL_PHASES) merged[phase] = { ...base[phase], ...overrides[phase] };
  return merged;
}
