import { describe, expect, it } from 'vitest';
import { fuseCandidates, relevanceOf } from './fusion';
import { modelVector, type ModelVector } from './model-vector';
import { DEFAULT_RANKING_CONFIG as CONFIG } from './ranking-config';
import { MODEL } from './testing/fixtures';

const QUERY = modelVector(MODEL, [1, 0]);
const VECTORS: Record<string, ModelVector> = {
  A: modelVector(MODEL, [1, 0]),
  B: modelVector(MODEL, [0.6, 0.8]),
  D: modelVector(MODEL, [-1, 0]),
};
const BM25 = [
  { id: 'A', score: 12.5 },
  { id: 'B', score: 8 },
  { id: 'C', score: 3 },
];
const KNN = [{ id: 'B' }, { id: 'D' }, { id: 'A' }];

describe('fuseCandidates', () => {
  it('should fuse by RRF, compute the exact cosine of every candidate and mix them (by hand)', () => {
    const fused = fuseCandidates(
      { bm25: BM25, knn: KNN, query: QUERY, vectorOf: (id) => VECTORS[id] },
      CONFIG,
    );
    const byId = Object.fromEntries(fused.map((candidate) => [candidate.id, candidate]));
    expect(fused.map((candidate) => candidate.id)).toEqual(['B', 'A', 'D', 'C']);
    // fusedNormalised = fused / (2/21) (k = 20): B = (1 + 21/22)/2 = 43/44, A = (1 + 21/23)/2 = 44/46.
    expect(byId.B.fusedNormalised).toBeCloseTo(43 / 44, 10);
    expect(byId.A.fusedNormalised).toBeCloseTo(44 / 46, 10);
    expect(byId.D.fusedNormalised).toBeCloseTo(21 / 44, 10);
    expect(byId.C.fusedNormalised).toBeCloseTo(21 / 46, 10);
    // relevance = (0.5·fusedNormalised + 0.5·max(0, cosine)) / 1
    expect(byId.B).toMatchObject({
      knn: expect.closeTo(0.6, 10) as number,
      cosineStatus: 'computed',
      bm25: 8,
      bm25Rank: 2,
      knnRank: 1,
    });
    expect(byId.B.relevance).toBeCloseTo((43 / 44 + 0.6) / 2, 10); // 0.7886364
    expect(byId.A.relevance).toBeCloseTo((44 / 46 + 1) / 2, 10); // 0.9782609
    expect(byId.D.knn).toBeCloseTo(-1, 10);
    expect(byId.D.relevance).toBeCloseTo(21 / 44 / 2, 10); // a negative cosine adds nothing
    expect(byId.C).toMatchObject({ cosineStatus: 'no_document_vector', knn: 0, knnRank: 0 });
    expect(byId.C.relevance).toBeCloseTo(21 / 46 / 2, 10);
  });

  it('should refuse to compare vectors of another model or dimension, without failing the query', () => {
    const fused = fuseCandidates(
      {
        bm25: [{ id: 'old' }, { id: 'short' }],
        knn: [],
        query: QUERY,
        vectorOf: (id) =>
          id === 'old' ? modelVector('other-model', [1, 0]) : modelVector(MODEL, [1, 0, 0]),
      },
      CONFIG,
    );
    expect(fused.map((c) => [c.id, c.cosineStatus, c.knn])).toEqual([
      ['old', 'model_mismatch', 0],
      ['short', 'dimension_mismatch', 0],
    ]);
  });

  it("should take a kNN hit's cosine from its index and the others' from their vectors", () => {
    const asked: string[] = [];
    const fused = fuseCandidates(
      {
        bm25: BM25,
        knn: [
          { id: 'B', similarity: 0.6 },
          { id: 'D', similarity: -1.0000001 },
          { id: 'A', similarity: 1 },
        ],
        query: QUERY,
        vectorOf: (id) => {
          asked.push(id);
          return VECTORS[id];
        },
      },
      CONFIG,
    );
    const computed = fuseCandidates(
      { bm25: BM25, knn: KNN, query: QUERY, vectorOf: (id) => VECTORS[id] },
      CONFIG,
    );
    // Only the BM25-only candidate needed its stored vector; the rest match the computed run.
    expect(asked).toEqual(['C']);
    expect(fused.map((c) => [c.id, c.cosineStatus])).toEqual(
      computed.map((c) => [c.id, c.cosineStatus]),
    );
    fused.forEach((c, i) => expect(c.relevance).toBeCloseTo(computed[i].relevance, 6));
    expect(fused.find((c) => c.id === 'D')?.knn).toBe(-1); // float32 rounding clamped
  });

  it("should ignore an index's similarity when there is no query vector", () => {
    const fused = fuseCandidates(
      { bm25: [], knn: [{ id: 'A', similarity: 0.9 }], query: null, vectorOf: () => undefined },
      CONFIG,
    );
    expect(fused[0]).toMatchObject({ cosineStatus: 'no_query_vector', knn: 0 });
  });

  it('should use the normalised RRF alone when there is no query vector (lexical-only recall)', () => {
    const fused = fuseCandidates(
      { bm25: BM25, knn: null, query: null, vectorOf: (id) => VECTORS[id] },
      CONFIG,
    );
    expect(fused.map((c) => c.id)).toEqual(['A', 'B', 'C']);
    // One list searched: the maximum is 1/21, so rank 1 → 1, rank 2 → 21/22.
    expect(fused[0]).toMatchObject({ relevance: 1, cosineStatus: 'no_query_vector', knnRank: 0 });
    expect(fused[1].relevance).toBeCloseTo(21 / 22, 10);
  });

  it('should keep relevance within [0, 1] for any mix', () => {
    expect(relevanceOf(1, 1, true, CONFIG)).toBe(1);
    expect(relevanceOf(0.2, -0.9, true, CONFIG)).toBeCloseTo(0.1, 12);
    expect(relevanceOf(0.4, 0.9, false, CONFIG)).toBe(0.4);
  });
});
