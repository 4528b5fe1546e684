import { describe, expect, it } from 'vitest';
import { embeddingCosine, overlapCoefficient, topicSimilarity } from './topic-similarity';

describe('topicSimilarity', () => {
  it('should use the cosine of the embeddings when both sides have one', () => {
    expect(
      topicSimilarity(
        { keywords: ['auth'], embedding: [1, 0] },
        { keywords: ['build'], embedding: [1, 0] },
      ),
    ).toEqual({ similarity: 1, measure: 'cosine' });
  });

  it('should count a negative cosine as 0', () => {
    expect(
      topicSimilarity({ keywords: [], embedding: [1, 0] }, { keywords: [], embedding: [-1, 0] }),
    ).toEqual({ similarity: 0, measure: 'cosine' });
  });

  it('should fall back to Jaccard of the keywords when either embedding is missing or unusable', () => {
    const keywords = { a: ['auth', 'refresh', 'token'], b: ['auth', 'token', 'race'] };
    expect(
      topicSimilarity({ keywords: keywords.a, embedding: [1, 0] }, { keywords: keywords.b }),
    ).toEqual({ similarity: 0.5, measure: 'jaccard' });
    expect(
      topicSimilarity(
        { keywords: keywords.a, embedding: [1, 0] },
        { keywords: keywords.b, embedding: [1, 0, 0] },
      ),
    ).toEqual({ similarity: 0.5, measure: 'jaccard' });
    expect(
      topicSimilarity(
        { keywords: keywords.a, embedding: [0, 0] },
        { keywords: keywords.b, embedding: [1, 0] },
      ),
    ).toEqual({ similarity: 0.5, measure: 'jaccard' });
  });

  it('should give 0 for two empty keyword bags without embeddings', () => {
    expect(topicSimilarity({ keywords: [] }, { keywords: [] })).toEqual({
      similarity: 0,
      measure: 'jaccard',
    });
  });
});

describe('embeddingCosine', () => {
  it('should compute the cosine of two vectors', () => {
    expect(embeddingCosine([1, 2, 3], [2, 4, 6])).toBeCloseTo(1, 12);
    expect(embeddingCosine([1, 0], [0, 1])).toBe(0);
    expect(embeddingCosine([1, 1], [1, 0])).toBeCloseTo(Math.SQRT1_2, 12);
  });

  it('should give null for missing, empty, mismatched, zero or non-finite vectors', () => {
    expect(embeddingCosine(undefined, [1])).toBeNull();
    expect(embeddingCosine(null, [1])).toBeNull();
    expect(embeddingCosine([], [])).toBeNull();
    expect(embeddingCosine([1, 2], [1])).toBeNull();
    expect(embeddingCosine([0, 0], [1, 1])).toBeNull();
    expect(embeddingCosine([Number.NaN, 1], [1, 1])).toBeNull();
    expect(embeddingCosine([Infinity, 1], [1, 1])).toBeNull();
  });
});

describe('overlapCoefficient', () => {
  it('should measure how much of the smaller set the larger one contains', () => {
    expect(overlapCoefficient(['a'], ['a', 'b', 'c', 'd'])).toBe(1);
    expect(overlapCoefficient(['a', 'x'], ['a', 'b', 'c'])).toBe(0.5);
  });

  it('should give 0 when either set is empty', () => {
    expect(overlapCoefficient([], ['a'])).toBe(0);
    expect(overlapCoefficient(['a'], [])).toBe(0);
  });
});
