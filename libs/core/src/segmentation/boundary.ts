import { intentKeywords, jaccardOfUnique, wordCount } from './intent-keywords';
import {
  DEFAULT_LEARNED_BOUNDARY_MODEL,
  LEXICAL_LEARNED_BOUNDARY_MODEL,
  learnedBoundaryFeatures,
  learnedBoundaryScore,
} from './learned-boundary';
import { gapAdjustedThreshold, type SegmenterSettings } from './segmenter-settings';
import { embeddingCosine } from './topic-similarity';

/** What the open episode knows of its intent: the keyword bag and, in hybrid mode, a centroid. */
export interface EpisodeIntent {
  bag: readonly string[];
  /**
   * What the prompt's embedding is compared with: the sum (direction of the mean) of the
   * episode's prompt embeddings, or of its last `hybridWindow` ones; null in keyword mode.
   */
  centroid: readonly number[] | null;
  /** hybrid `learned` rule: the episode's latest prompt embedding, … */
  previous?: readonly number[] | null;
  /** … the sum of all its prompt embeddings … */
  centroidSum?: readonly number[] | null;
  /** … and how many user prompts it holds. */
  prompts?: number;
}

export interface PromptSignal {
  text: string;
  /** The prompt's intent keywords; computed here when absent (terse prompts never need them). */
  keywords?: readonly string[];
  /** Time since the thread's previous prompt. */
  gapMs: number;
  /** The thread timeout the gap is measured against. */
  timeoutMs: number;
  /** The prompt's embedding in hybrid mode. */
  embedding: readonly number[] | null;
}

/**
 * Which rule decided: `terse` and `low_signal` continue without comparing; `seeds_bag` continues
 * an episode that has no keywords yet; `similar` / `intent_shift` compared and decided.
 */
export type BoundaryRule = 'terse' | 'low_signal' | 'seeds_bag' | 'similar' | 'intent_shift';

export interface BoundaryVerdict {
  boundary: boolean;
  /** The prompt's keywords (empty for a terse prompt, whose words are never looked at). */
  keywords: readonly string[];
  rule: BoundaryRule;
  /** Null when the rule did not compare. */
  similarity: number | null;
  threshold: number | null;
}

/**
 * Seed 000's boundary decision for one user prompt against its open episode:
 * 1. fewer than `tersePromptWords` words → continuation, unless after a gap longer than the timeout;
 * 2. fewer than `minIntentKeywords` (hybrid: `hybridMinIntentKeywords`) keywords → continuation,
 *    with the same exception;
 * 3. otherwise similarity (Jaccard with the bag; hybrid blends in the embedding cosine with the
 *    centroid) below the gap-adjusted threshold → boundary.
 */
export function decideBoundary(
  episode: EpisodeIntent,
  prompt: PromptSignal,
  settings: SegmenterSettings,
): BoundaryVerdict {
  const afterLongGap = prompt.gapMs > prompt.timeoutMs;
  const terseWords = settings.tersePromptWords;
  if (!afterLongGap && wordCount(prompt.text, terseWords) < terseWords) {
    return { boundary: false, keywords: [], rule: 'terse', similarity: null, threshold: null };
  }
  const keywords = prompt.keywords ?? intentKeywords(prompt.text);
  if (settings.mode === 'hybrid' && settings.hybridRule === 'learned') {
    const learned = learnedVerdict(episode, prompt, keywords, afterLongGap);
    if (learned) return learned;
  }
  const minKeywords =
    settings.mode === 'hybrid' ? settings.hybridMinIntentKeywords : settings.minIntentKeywords;
  if (!afterLongGap && keywords.length < minKeywords) {
    return continuation(keywords, 'low_signal');
  }
  if (episode.bag.length === 0 && !afterLongGap) return continuation(keywords, 'seeds_bag');
  const similarity = promptSimilarity(episode, { keywords, embedding: prompt.embedding }, settings);
  const base = settings.mode === 'hybrid' ? settings.hybridThreshold : settings.boundaryThreshold;
  const threshold = gapAdjustedThreshold(base, prompt.gapMs, prompt.timeoutMs, settings);
  const boundary = similarity < threshold;
  return { boundary, keywords, rule: boundary ? 'intent_shift' : 'similar', similarity, threshold };
}

/**
 * hybrid's `learned` rule (learned-boundary.ts): every non-terse prompt is scored, the keyword
 * count and the gap being features rather than rules. Reported as similarity = 1 − score against
 * threshold = 1 − the model's threshold, so "similarity < threshold" still means a boundary.
 * Without embeddings at all (no model installed) the lexical model decides; null (the blended
 * rule decides) when only the episode has none yet (it was opened by a terse prompt).
 */
function learnedVerdict(
  episode: EpisodeIntent,
  prompt: PromptSignal,
  keywords: readonly string[],
  afterLongGap: boolean,
): BoundaryVerdict | null {
  const centroidSum = episode.centroidSum ?? episode.centroid;
  if (prompt.embedding && !centroidSum) return null;
  const model = prompt.embedding ? DEFAULT_LEARNED_BOUNDARY_MODEL : LEXICAL_LEARNED_BOUNDARY_MODEL;
  const features = learnedBoundaryFeatures({
    embedding: prompt.embedding ?? [],
    previous: episode.previous ?? centroidSum,
    centroidSum,
    keywords,
    bag: episode.bag,
    episodePrompts: episode.prompts ?? 1,
    afterLongGap,
  });
  const score = learnedBoundaryScore(features, model);
  const boundary = score >= model.threshold;
  return {
    boundary,
    keywords,
    rule: boundary ? 'intent_shift' : 'similar',
    similarity: 1 - score,
    threshold: 1 - model.threshold,
  };
}

function continuation(keywords: readonly string[], rule: BoundaryRule): BoundaryVerdict {
  return { boundary: false, keywords, rule, similarity: null, threshold: null };
}

/** Jaccard in keyword mode; in hybrid mode blended with the cosine to the episode centroid. */
export function promptSimilarity(
  episode: EpisodeIntent,
  prompt: { keywords: readonly string[]; embedding: readonly number[] | null },
  settings: Pick<SegmenterSettings, 'mode' | 'hybridEmbeddingWeight'>,
): number {
  const keywordSimilarity = jaccardOfUnique(prompt.keywords, episode.bag);
  if (settings.mode !== 'hybrid' || !prompt.embedding || !episode.centroid) {
    return keywordSimilarity;
  }
  const weight = settings.hybridEmbeddingWeight;
  const semantic = Math.max(0, embeddingCosine(prompt.embedding, episode.centroid) ?? 0);
  return (1 - weight) * keywordSimilarity + weight * semantic;
}
