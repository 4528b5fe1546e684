import { jaccard } from './intent-keywords';

/** What a topic is compared by: its keyword bag, and an embedding when one was computed. */
export interface TopicFeatures {
  keywords: readonly string[];
  embedding?: readonly number[] | null;
}

export type TopicMeasure = 'cosine' | 'jaccard';

export interface TopicSimilarity {
  /** In [0, 1]. */
  similarity: number;
  measure: TopicMeasure;
}

/**
 * Topic similarity of two episodes (seed 003 chaining): the cosine of their embeddings when BOTH
 * have a usable one (same non-zero length, non-zero norm, finite values), otherwise the Jaccard
 * similarity of their keyword bags. A negative cosine counts as 0, so the value is always in
 * [0, 1] and comparable with one threshold.
 */
export function topicSimilarity(a: TopicFeatures, b: TopicFeatures): TopicSimilarity {
  const cosine = embeddingCosine(a.embedding, b.embedding);
  if (cosine !== null) return { similarity: Math.max(0, cosine), measure: 'cosine' };
  return { similarity: jaccard(a.keywords, b.keywords), measure: 'jaccard' };
}

/**
 * Cosine similarity of two embeddings in [-1, 1], or null when either is missing, empty, of a
 * different length, all zeros or not finite.
 */
export function embeddingCosine(
  a: readonly number[] | null | undefined,
  b: readonly number[] | null | undefined,
): number | null {
  if (!a || !b || a.length === 0 || a.length !== b.length) return null;
  let dot = 0;
  let normA = 0;
  let normB = 0;
  for (let i = 0; i < a.length; i += 1) {
    dot += a[i] * b[i];
    normA += a[i] * a[i];
    normB += b[i] * b[i];
  }
  if (!Number.isFinite(dot) || !(normA > 0) || !(normB > 0)) return null;
  if (!Number.isFinite(normA) || !Number.isFinite(normB)) return null;
  return Math.min(1, Math.max(-1, dot / Math.sqrt(normA * normB)));
}

/**
 * Overlap (Szymkiewicz–Simpson) coefficient |a ∩ b| / min(|a|, |b|): how much of the smaller set
 * the larger one contains. 0 when either set is empty.
 */
export function overlapCoefficient(a: Iterable<string>, b: Iterable<string>): number {
  const left = new Set(a);
  const right = new Set(b);
  if (left.size === 0 || right.size === 0) return 0;
  const [small, large] = left.size <= right.size ? [left, right] : [right, left];
  let shared = 0;
  for (const item of small) if (large.has(item)) shared += 1;
  return shared / small.size;
}
