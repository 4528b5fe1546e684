import { describe, expect, it } from 'vitest';
import { BM25_MIN_IDF, bm25Idf, bm25TermScore, indexBuildDue, significantQueryTerms } from './bm25';

describe('bm25Idf', () => {
  it("should be FTS5's ln((N − n + 0.5) / (n + 0.5)), floored to 1e-6 from half the documents", () => {
    expect(bm25Idf(100, 1)).toBeCloseTo(Math.log(99.5 / 1.5), 12); // 4.1947
    expect(bm25Idf(100, 49)).toBeCloseTo(Math.log(51.5 / 49.5), 12); // still > 0
    expect(bm25Idf(100, 50)).toBe(BM25_MIN_IDF); // ln(1) = 0
    expect(bm25Idf(100, 100)).toBe(BM25_MIN_IDF);
  });
});

describe('bm25TermScore', () => {
  it('should weigh frequency with saturation and length against the average (k1 1.2, b 0.75)', () => {
    // f = 1 at the average length: idf · 2.2 / (1 + 1.2) = idf.
    expect(bm25TermScore(2, 1, 10, 10)).toBeCloseTo(2, 12);
    // f = 2 in a document half the average: 2 · 4.4 / (2 + 1.2 · 0.625) = 3.2.
    expect(bm25TermScore(2, 2, 5, 10)).toBeCloseTo(3.2, 12);
    // Twice the average length weighs less than the average.
    expect(bm25TermScore(2, 1, 20, 10)).toBeLessThan(bm25TermScore(2, 1, 10, 10));
  });
});

describe('significantQueryTerms', () => {
  const rule = { minDocuments: 0, maxTerms: 32 };

  it('should drop terms in no document and terms in half the documents or more', () => {
    // N = 100: 0 (absent), 3, 50 (half: IDF floored), 49 (kept), 100.
    expect(significantQueryTerms([0, 3, 50, 49, 100], 100, rule)).toEqual([1, 3]);
  });

  it('should keep the rarest term, the first of equals, when every term is that common', () => {
    expect(significantQueryTerms([90, 60, 0, 60], 100, rule)).toEqual([1]);
    expect(significantQueryTerms([0, 0], 100, rule)).toEqual([]);
    expect(significantQueryTerms([], 100, rule)).toEqual([]);
  });

  it('should keep at most maxTerms, the rarest, ties to the first, in query order', () => {
    expect(significantQueryTerms([5, 1, 9, 3, 5], 100, { ...rule, maxTerms: 3 })).toEqual([
      0, 1, 3,
    ]);
    expect(significantQueryTerms([5, 1, 9, 3, 5], 100, { ...rule, maxTerms: 5 })).toEqual([
      0, 1, 2, 3, 4,
    ]);
  });

  it('should keep every present term below minDocuments (a small index is fast anyway)', () => {
    // Two memories, each word in one: both "common", both kept, as FTS5 alone would find them.
    expect(significantQueryTerms([1, 1, 0], 2, { minDocuments: 10, maxTerms: 1 })).toEqual([0, 1]);
  });

  it('should apply from 10,000 documents and keep up to 32 terms by default', () => {
    expect(significantQueryTerms([3, 6_000], 9_999)).toEqual([0, 1]);
    expect(significantQueryTerms([3, 6_000], 10_000)).toEqual([0]);
    const frequencies = Array.from({ length: 40 }, (_, i) => 40 - i);
    const kept = significantQueryTerms(frequencies, 10_000);
    expect(kept).toHaveLength(32);
    expect(kept[0]).toBe(8); // the 8 most common (40 … 33) left out
  });
});

describe('indexBuildDue', () => {
  it('should build once what was spent without the index reaches the expected build cost', () => {
    expect(indexBuildDue(0, 2_000)).toBe(false);
    expect(indexBuildDue(1_999, 2_000)).toBe(false);
    expect(indexBuildDue(2_000, 2_000)).toBe(true);
    expect(indexBuildDue(0, 0)).toBe(true);
  });
});
