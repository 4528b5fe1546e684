import { MisconfigurationError } from '../errors/engram-error';
import { CONTEXT_ITEM_KINDS, type ContextItemKind } from './context-types';
import type { ContextConfig, RankingConfig } from './ranking-config';
import { UNIVERSAL_PHASES } from './universal-phase';

/** Throws MisconfigurationError on the first key that cannot work. */
export function validateRankingConfig(config: RankingConfig): void {
  positive('rrfK', config.rrfK);
  positive('recencyDecayDays', config.recencyDecayDays);
  nonNegative('missingPhaseWeight', config.missingPhaseWeight);
  nonNegative('hybrid.relevance', config.hybrid.relevance);
  nonNegative('hybrid.recency', config.hybrid.recency);
  nonNegative('hybrid.frequency', config.hybrid.frequency);
  nonNegative('relevanceMix.rrf', config.relevanceMix.rrf);
  nonNegative('relevanceMix.cosine', config.relevanceMix.cosine);
  positive('relevanceMix (sum)', config.relevanceMix.rrf + config.relevanceMix.cosine);
  for (const phase of UNIVERSAL_PHASES) {
    for (const [type, weight] of Object.entries(config.phaseWeights[phase] ?? {})) {
      nonNegative(`phaseWeights.${phase}.${type}`, weight);
    }
  }
  unit('stale.penalty', config.stale.penalty);
  unit('injection.minConfidence', config.injection.minConfidence);
  count('injection.maxResults', config.injection.maxResults);
  count('injection.minAccessCount', config.injection.minAccessCount, 0);
  unit('causal.minEdgeWeight', config.causal.minEdgeWeight);
  count('causal.maxFiles', config.causal.maxFiles);
  count('causal.maxMemories', config.causal.maxMemories);
  count('hyde.minStrongResults', config.hyde.minStrongResults);
  unit('hyde.strongRelevance', config.hyde.strongRelevance);
  nonNegative('hyde.queryWeight', config.hyde.queryWeight);
  nonNegative('hyde.hypotheticalWeight', config.hyde.hypotheticalWeight);
  positive('hyde (sum of weights)', config.hyde.queryWeight + config.hyde.hypotheticalWeight);
  unit('sequence.minRelevance', config.sequence.minRelevance);
  positive('sequence.overFetchFactor', config.sequence.overFetchFactor);
  count('sequence.defaultLimit', config.sequence.defaultLimit);
  count('sequence.replayDefaultLimit', config.sequence.replayDefaultLimit);
  validateContextConfig(config.context);
  count('access.maxPendingIds', config.access.maxPendingIds);
  nonNegative('access.maxAgeMs', config.access.maxAgeMs);
  unit('priors.share', config.priors.share);
  unit('priors.phaseExponent', config.priors.phaseExponent);
  unit('crossTier.coverage', config.crossTier.coverage);
  unit('crossTier.memoryBand', config.crossTier.memoryBand);
}

function validateContextConfig(context: ContextConfig): void {
  count('context.defaultTokenBudget', context.defaultTokenBudget);
  positive('context.charsPerToken', context.charsPerToken);
  count('context.maxItemTokens', context.maxItemTokens);
  count('context.maxThreadTurns', context.maxThreadTurns, 0);
  count('context.maxCrossThreadEpisodes', context.maxCrossThreadEpisodes, 0);
  count(
    'context.explicitChannelCrossThreadEpisodes',
    context.explicitChannelCrossThreadEpisodes,
    0,
  );
  count('context.maxMemories', context.maxMemories, 0);
  count('context.maxRecipes', context.maxRecipes, 0);
  permutation('context.priority', context.priority);
  permutation('context.displayOrder', context.displayOrder);
}

function fail(key: string, problem: string): never {
  throw new MisconfigurationError(`ranking config ${key}: ${problem}`, { key });
}

function finite(key: string, value: number): void {
  if (typeof value !== 'number' || !Number.isFinite(value)) fail(key, `${value} is not a number`);
}

function positive(key: string, value: number): void {
  finite(key, value);
  if (!(value > 0)) fail(key, `must be > 0, got ${value}`);
}

function nonNegative(key: string, value: number): void {
  finite(key, value);
  if (value < 0) fail(key, `must be >= 0, got ${value}`);
}

function unit(key: string, value: number): void {
  finite(key, value);
  if (value < 0 || value > 1) fail(key, `must be within [0, 1], got ${value}`);
}

function count(key: string, value: number, min = 1): void {
  if (!Number.isInteger(value) || value < min) {
    fail(key, `must be an integer >= ${min}, got ${value}`);
  }
}

function permutation(key: string, kinds: readonly ContextItemKind[]): void {
  const unique = new Set(kinds);
  const complete = CONTEXT_ITEM_KINDS.every((kind) => unique.has(kind));
  if (!complete || unique.size !== kinds.length || kinds.length !== CONTEXT_ITEM_KINDS.length) {
    fail(key, `must list each of ${CONTEXT_ITEM_KINDS.join(', ')} exactly once`);
  }
}
