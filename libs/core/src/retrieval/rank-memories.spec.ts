import { DEFAULT_RANKING_CONFIG } from './ranking-config';
import { describe, expect, it } from 'vitest';
import { modelVector } from './model-vector';
import { rankByPriors, rankMemories, type RankMemoriesInput } from './rank-memories';
import { DEFAULT_RANKING_CONFIG as CONFIG } from './ranking-config';
import { InvalidRecallRequestError } from './retrieval-errors';
import { DAY, memory, MODEL, NOW, SCOPE } from './testing/fixtures';

const QUERY = modelVector(MODEL, [1, 0]);

function input(overrides: Partial<RankMemoriesInput>): RankMemoriesInput {
  return {
    filter: { ...SCOPE },
    phase: 'explore',
    now: NOW,
    bm25: [],
    knn: [],
    query: QUERY,
    memories: [],
    ...overrides,
  };
}

// Two memories that match the query identically and have identical priors; only the type differs.
const TWINS = [
  memory({ memoryId: 'a-gotcha', memoryType: 'gotcha', embedding: [1, 0], embeddingModel: MODEL }),
  memory({
    memoryId: 'b-decision',
    memoryType: 'decision',
    embedding: [1, 0],
    embeddingModel: MODEL,
  }),
];
const TWIN_HITS = {
  bm25: [{ id: 'a-gotcha' }, { id: 'b-decision' }],
  knn: [{ id: 'b-decision' }, { id: 'a-gotcha' }],
};

describe('rankMemories', () => {
  it('should let the phase table decide between otherwise equal memories', () => {
    const implement = rankMemories(
      input({ ...TWIN_HITS, memories: TWINS, phase: 'implement' }),
      DEFAULT_RANKING_CONFIG,
    );
    const explore = rankMemories(
      input({ ...TWIN_HITS, memories: TWINS, phase: 'explore' }),
      DEFAULT_RANKING_CONFIG,
    );
    expect(implement.map((r) => r.memory.memoryId)).toEqual(['a-gotcha', 'b-decision']); // 1.5 vs 0.7
    expect(explore.map((r) => r.memory.memoryId)).toEqual(['b-decision', 'a-gotcha']); // 1.4 vs 0.8
    // the phase weight is damped (weight^0.25, issue #23): it decides between equals only
    expect(implement[0].score.finalScore / implement[1].score.finalScore).toBeCloseTo(
      Math.pow(1.5 / 0.7, 0.25),
      10,
    );
  });

  it('should compute every component end to end (by hand)', () => {
    const memories = [
      memory({
        memoryId: 'm1',
        memoryType: 'gotcha',
        embedding: [0.6, 0.8],
        embeddingModel: MODEL,
        createdAt: NOW - 30 * DAY,
        confidence: 0.5,
        lastAccessedAt: NOW - 30 * DAY,
        accessCount: 3,
      }),
      memory({
        memoryId: 'm2',
        memoryType: 'pattern',
        embedding: [1, 0],
        embeddingModel: MODEL,
        createdAt: NOW,
        confidence: 1,
        lastAccessedAt: NOW,
        accessCount: 7,
      }),
    ];
    const [first, second] = rankMemories(
      input({
        memories,
        phase: 'implement',
        bm25: [{ id: 'm1', score: 9 }],
        knn: [{ id: 'm2' }, { id: 'm1' }],
      }),
      DEFAULT_RANKING_CONFIG,
    );
    // final = relevance · (0.9 + 0.1·prior) · weight^0.25, prior = (0.25·recency + 0.15·use) / 0.4,
    // recency from createdAt, use = confidence; the access counts are reported, never ranked.
    // m1: fusedNorm = (1/21 + 1/22)/(2/21) = 43/44; cos 0.6 → relevance 0.7886364;
    //     prior = (0.25·e^-1 + 0.15·0.5)/0.4 = 0.4174247; × 0.9417425 × gotcha 1.5^0.25 = 0.8219242
    // m2: fusedNorm = (1/21)/(2/21) = 0.5; cos 1 → relevance 0.75; prior 1 (new, confidence 1);
    //     × 1 × pattern 1.2^0.25 = 0.7849764 — fresher, surer and more used, still second
    expect(first.memory.memoryId).toBe('m1');
    expect(first.score.relevance).toBeCloseTo((43 / 44 + 0.6) / 2, 12);
    expect(first.score.recency).toBeCloseTo(Math.exp(-1), 12);
    expect(first.score.frequency).toBe(0.5);
    const prior = (0.25 * Math.exp(-1) + 0.15 * 0.5) / 0.4;
    expect(first.score.base).toBeCloseTo(((43 / 44 + 0.6) / 2) * (0.9 + 0.1 * prior), 12);
    expect(first.score.finalScore).toBeCloseTo(first.score.base * Math.pow(1.5, 0.25), 12);
    expect(first.score.finalScore).toBeCloseTo(0.8219242, 6);
    expect(first.score).toMatchObject({
      bm25: 9,
      bm25Rank: 1,
      knnRank: 2,
      accessCount: 3,
      maxAccessCount: 7,
    });
    expect(second.memory.memoryId).toBe('m2');
    expect(second.score.relevance).toBeCloseTo(0.75, 12);
    expect(second.score.finalScore).toBeCloseTo(0.75 * Math.pow(1.2, 0.25), 12);
    expect(first.provenance).toMatchObject({
      memoryId: 'm1',
      tenantId: SCOPE.tenantId,
      sessionIds: ['session-1'],
    });
  });

  it('should return stale memories penalised and prefixed in an explicit search', () => {
    const stale = memory({
      memoryId: 'stale',
      content: 'use src/old.ts',
      confidence: 0.8,
      staleAt: NOW - DAY,
    });
    const fresh = memory({ memoryId: 'fresh', confidence: 0.8 });
    const ranked = rankMemories(
      input({
        memories: [stale, fresh],
        bm25: [{ id: 'stale' }, { id: 'fresh' }],
        query: null,
        knn: null,
      }),
      DEFAULT_RANKING_CONFIG,
    );
    const staleResult = ranked.find((r) => r.memory.memoryId === 'stale');
    expect(staleResult).toMatchObject({
      stale: true,
      content: '[STALE — file no longer exists] use src/old.ts',
      confidence: 0.4,
    });
    expect(staleResult?.score.stalePenalty).toBe(0.5);
    expect(ranked.map((r) => r.memory.memoryId)).toEqual(['fresh', 'stale']); // despite ranking first lexically
    expect(staleResult?.memory.content).toBe('use src/old.ts'); // the stored memory is untouched
  });

  it('should drop stale memories when the search excludes them', () => {
    const ranked = rankMemories(
      input({
        filter: { ...SCOPE, stale: 'exclude' },
        memories: [memory({ memoryId: 'stale', staleAt: NOW }), memory({ memoryId: 'ok' })],
        bm25: [{ id: 'stale' }, { id: 'ok' }],
      }),
      DEFAULT_RANKING_CONFIG,
    );
    expect(ranked.map((r) => r.memory.memoryId)).toEqual(['ok']);
  });

  it('should apply the filter, and never return another tenant or project', () => {
    const memories = [
      memory({ memoryId: 'other-tenant', tenantId: 'tenant-b' }),
      memory({ memoryId: 'other-project', projectId: 'repo-b' }),
      memory({ memoryId: 'wrong-type', memoryType: 'decision' }),
      memory({ memoryId: 'low', confidence: 0.3 }),
      memory({ memoryId: 'ok', confidence: 0.9 }),
    ];
    const ranked = rankMemories(
      input({
        filter: { ...SCOPE, types: ['gotcha'], minConfidence: 0.5 },
        memories,
        bm25: memories.map((m) => ({ id: m.memoryId })),
      }),
      DEFAULT_RANKING_CONFIG,
    );
    expect(ranked.map((r) => r.memory.memoryId)).toEqual(['ok']);
  });

  it('should compute maxAccessCount over the kept candidates only', () => {
    const memories = [
      memory({ memoryId: 'filtered', memoryType: 'decision', accessCount: 100 }),
      memory({ memoryId: 'kept', accessCount: 4 }),
    ];
    const [kept] = rankMemories(
      input({
        filter: { ...SCOPE, types: ['gotcha'] },
        memories,
        bm25: [{ id: 'filtered' }, { id: 'kept' }],
      }),
      DEFAULT_RANKING_CONFIG,
    );
    // reported (never ranked since issue #23: the use prior is the confidence, 0.8 here)
    expect(kept.score).toMatchObject({ accessCount: 4, maxAccessCount: 4, frequency: 0.8 });
  });

  it('should ignore hits whose document is gone, flag HyDE hits and honour the limit', () => {
    const memories = [
      memory({ memoryId: 'a' }),
      memory({ memoryId: 'b' }),
      memory({ memoryId: 'c' }),
    ];
    const ranked = rankMemories(
      input({
        memories,
        bm25: [{ id: 'deleted' }, { id: 'a' }, { id: 'b' }, { id: 'c' }],
        hydeIds: new Set(['b']),
        limit: 2,
      }),
      DEFAULT_RANKING_CONFIG,
    );
    expect(ranked.map((r) => [r.memory.memoryId, r.score.hyde])).toEqual([
      ['a', false],
      ['b', true],
    ]);
  });

  it('should require tenant and project', () => {
    expect(() =>
      rankMemories(input({ filter: { tenantId: '', projectId: 'p' } }), DEFAULT_RANKING_CONFIG),
    ).toThrow(InvalidRecallRequestError);
    expect(() =>
      rankMemories(input({ filter: { tenantId: 't', projectId: '  ' } }), DEFAULT_RANKING_CONFIG),
    ).toThrow('projectId: is required');
  });

  it('should be deterministic whatever the input order', () => {
    const memories = [
      memory({ memoryId: 'x' }),
      memory({ memoryId: 'y' }),
      memory({ memoryId: 'z' }),
    ];
    const hits = memories.map((m) => ({ id: m.memoryId }));
    const forward = rankMemories(
      input({ memories, bm25: hits, knn: [...hits].reverse() }),
      DEFAULT_RANKING_CONFIG,
    );
    const backward = rankMemories(
      input({ memories: [...memories].reverse(), bm25: hits, knn: [...hits].reverse() }),
      DEFAULT_RANKING_CONFIG,
    );
    expect(backward).toEqual(forward);
    // x (#1, #3) and z (#3, #1) tie at 1/21 + 1/23 = 0.0910973, just above y (#2, #2) at 2/22 =
    // 0.0909091 (k = 20); the tie goes to the smaller id.
    expect(forward.map((r) => r.memory.memoryId)).toEqual(['x', 'z', 'y']);
  });
});

describe('rankByPriors', () => {
  it('should use confidence as relevance when there is no query', () => {
    const ranked = rankByPriors(
      {
        memories: [
          memory({ memoryId: 'weak', confidence: 0.5 }),
          memory({ memoryId: 'strong', confidence: 1 }),
        ],
        phase: 'implement',
        now: NOW,
        causalExpansion: true,
      },
      CONFIG,
    );
    expect(ranked.map((r) => r.memory.memoryId)).toEqual(['strong', 'weak']);
    // strong: relevance 1 · (0.9 + 0.1·prior) · 1.5^0.25, prior = (0.25·e^(-10/30) + 0.15·1) / 0.4
    expect(ranked[0].score).toMatchObject({
      relevance: 1,
      relevanceBasis: 'confidence',
      causalExpansion: true,
    });
    const prior = (0.25 * Math.exp(-10 / 30) + 0.15) / 0.4;
    expect(ranked[0].score.finalScore).toBeCloseTo((0.9 + 0.1 * prior) * Math.pow(1.5, 0.25), 12);
  });
});
