import type { Memory } from '@engram/contracts';
import { DEFAULT_RANKING_CONFIG } from './ranking-config';
import { describe, expect, it } from 'vitest';
import { modelVector } from './model-vector';
import { rankByPriors, rankMemories, type RankMemoriesInput } from './rank-memories';
import { DEFAULT_RANKING_CONFIG as CONFIG, rankingConfig } from './ranking-config';
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

// Two memories that match the query identically and have identical priors (created now, so
// neither type's half-life has aged them); only the type differs.
const TWINS = [
  memory({
    memoryId: 'a-gotcha',
    memoryType: 'gotcha',
    embedding: [1, 0],
    embeddingModel: MODEL,
    createdAt: NOW,
  }),
  memory({
    memoryId: 'b-decision',
    memoryType: 'decision',
    embedding: [1, 0],
    embeddingModel: MODEL,
    createdAt: NOW,
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
    // recency from createdAt by the type's half-life (gotcha 90 d), use = confidence; the access
    // counts are reported, never ranked.
    // m1: fusedNorm = (1/21 + 1/22)/(2/21) = 43/44; cos 0.6 → relevance 0.7886364; recency
    //     0.5^(30/90) = 0.7937005; prior = (0.25·0.7937005 + 0.15·0.5)/0.4 = 0.6835628;
    //     × 0.9683563 × gotcha 1.5^0.25 = 0.8451519
    // m2: fusedNorm = (1/21)/(2/21) = 0.5; cos 1 → relevance 0.75; prior 1 (new, confidence 1);
    //     × 1 × pattern 1.2^0.25 = 0.7849764 — fresher, surer and more used, still second
    expect(first.memory.memoryId).toBe('m1');
    expect(first.score.relevance).toBeCloseTo((43 / 44 + 0.6) / 2, 12);
    expect(first.score.halfLifeDays).toBe(90);
    expect(first.score.recency).toBeCloseTo(Math.pow(0.5, 30 / 90), 12);
    expect(first.score.frequency).toBe(0.5);
    const prior = (0.25 * Math.pow(0.5, 30 / 90) + 0.15 * 0.5) / 0.4;
    expect(first.score.base).toBeCloseTo(((43 / 44 + 0.6) / 2) * (0.9 + 0.1 * prior), 12);
    expect(first.score.finalScore).toBeCloseTo(first.score.base * Math.pow(1.5, 0.25), 12);
    expect(first.score.finalScore).toBeCloseTo(0.8451519, 6);
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

describe('per-type half-lives (issue #20)', () => {
  // Only the priors differ: equally relevant (the cosine alone, the same vector for all), equally
  // confident, the phase weight switched off.
  const PRIORS_ONLY = rankingConfig({
    priors: { phaseExponent: 0 },
    relevanceMix: { rrf: 0, cosine: 1 },
  });
  const aged = (days: number, overrides: Partial<Memory> = {}) => [
    memory({
      memoryId: 'a-work-state',
      memoryType: 'work_state',
      embedding: [1, 0],
      embeddingModel: MODEL,
      createdAt: NOW - days * DAY,
      ...overrides,
    }),
    memory({
      memoryId: 'b-gotcha',
      memoryType: 'gotcha',
      embedding: [1, 0],
      embeddingModel: MODEL,
      createdAt: NOW - days * DAY,
    }),
    memory({
      memoryId: 'c-decision',
      memoryType: 'decision',
      embedding: [1, 0],
      embeddingModel: MODEL,
      createdAt: NOW - days * DAY,
    }),
  ];
  const hits = [{ id: 'a-work-state' }, { id: 'b-gotcha' }, { id: 'c-decision' }];
  const byId = (ranked: ReturnType<typeof rankMemories>) =>
    Object.fromEntries(ranked.map((r) => [r.memory.memoryId, r.score]));
  const rank = (memories: Memory[]) =>
    rankMemories(input({ memories, bm25: hits, knn: hits }), PRIORS_ONLY);

  it('should keep a gotcha recent where a work_state decays, by their own half-lives', () => {
    const scores = byId(rank(aged(28)));
    expect(scores['a-work-state'].halfLifeDays).toBe(7);
    expect(scores['a-work-state'].recency).toBeCloseTo(0.0625, 12); // four half-lives
    expect(scores['b-gotcha'].halfLifeDays).toBe(90);
    expect(scores['b-gotcha'].recency).toBeCloseTo(Math.pow(0.5, 28 / 90), 12); // 0.806
    // a type without a half-life keeps the default figures: exp(−days / 30)
    expect(scores['c-decision'].halfLifeDays).toBeNull();
    expect(scores['c-decision'].recency).toBeCloseTo(Math.exp(-28 / 30), 12);
  });

  it('should reorder equally relevant memories by their half-lives, within the priors band', () => {
    // created now: equal priors, the tie goes to the smaller id
    expect(rank(aged(0)).map((r) => r.memory.memoryId)).toEqual([
      'a-work-state',
      'b-gotcha',
      'c-decision',
    ]);
    // four weeks on the work state has faded below both
    const later = rank(aged(28));
    expect(later.map((r) => r.memory.memoryId)).toEqual(['b-gotcha', 'c-decision', 'a-work-state']);
    // relevance still dominates: the priors move a score by at most share = 10 %
    expect(later[0].score.finalScore / later[2].score.finalScore).toBeLessThan(1 / 0.9);
  });

  it("should let a memory's own decayHalfLifeDays override its type's", () => {
    const scores = byId(rank(aged(28, { decayHalfLifeDays: 28 })));
    expect(scores['a-work-state'].halfLifeDays).toBe(28);
    expect(scores['a-work-state'].recency).toBeCloseTo(0.5, 12);
  });

  it('should give the same list for the same data (deterministic)', () => {
    const memories = aged(10);
    expect(rank([...memories].reverse())).toEqual(rank(memories));
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
    // strong: relevance 1 · (0.9 + 0.1·prior) · 1.5^0.25, prior = (0.25·0.5^(10/90) + 0.15·1) / 0.4
    // (a gotcha: 90-day half-life)
    expect(ranked[0].score).toMatchObject({
      relevance: 1,
      relevanceBasis: 'confidence',
      causalExpansion: true,
    });
    const prior = (0.25 * Math.pow(0.5, 10 / 90) + 0.15) / 0.4;
    expect(ranked[0].score.finalScore).toBeCloseTo((0.9 + 0.1 * prior) * Math.pow(1.5, 0.25), 12);
  });
});
