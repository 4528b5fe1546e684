import { l2Normalise } from '../math/vectors';
import { assertComparable, type ModelVector } from './model-vector';
import type { RankingConfig } from './ranking-config';

/**
 * HyDE (hypothetical document embeddings, seed 002 §7): when a query finds little, ask an LLM for
 * the memory that would answer it and search with a blend of both embeddings — a short question
 * and a long answer sit in different parts of the embedding space, and the answer is closer to
 * what is stored.
 */

/**
 * HyDE runs only when it can (an LLM is configured and the caller allows it) and when it is
 * needed: fewer than `minStrongResults` (3) results with relevance above `strongRelevance` (0.5).
 * Relevance, not the final score, is what says whether the query matched: recency, frequency and
 * phase weights say nothing about that.
 */
export function shouldUseHyde(
  relevances: readonly number[],
  options: { llmConfigured: boolean; allowed?: boolean },
  config: RankingConfig,
): boolean {
  if (!options.llmConfigured || options.allowed === false) return false;
  const strong = relevances.filter((relevance) => relevance > config.hyde.strongRelevance).length;
  return strong < config.hyde.minStrongResults;
}

/** The seed's generation prompt (the LLM client adds its own system prompt and token limit). */
export function hydePrompt(query: string): string {
  return `Write a concise, specific developer memory that would perfectly answer: "${query.trim()}". Focus on concrete technical details.`;
}

/**
 * normalise(0.4·normalise(query) + 0.6·normalise(hypothetical)). Both inputs are normalised
 * first so the weights mean what they say whatever the embedder returns, and the blend is
 * normalised again so cosine and dot product agree. Both must come from the same model and
 * dimension (EmbeddingMismatchError otherwise).
 */
export function hydeEnsemble(
  query: ModelVector,
  hypothetical: ModelVector,
  config: RankingConfig,
): ModelVector {
  assertComparable(query, hypothetical);
  const q = l2Normalise(query.vector);
  const h = l2Normalise(hypothetical.vector);
  const blend = new Float32Array(q.length);
  for (let i = 0; i < q.length; i += 1) {
    blend[i] = config.hyde.queryWeight * q[i] + config.hyde.hypotheticalWeight * h[i];
  }
  return { model: query.model, dimension: query.dimension, vector: l2Normalise(blend) };
}
