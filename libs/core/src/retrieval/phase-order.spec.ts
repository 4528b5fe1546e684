import { MEMORY_TYPES, type MemoryType } from '@engram/contracts';
import { describe, expect, it } from 'vitest';
import { PHASE_WEIGHTS, phaseWeight } from './phase-weights';
import { rankMemories, type RankMemoriesInput } from './rank-memories';
import { memory, MODEL, NOW, SCOPE } from './testing/fixtures';
import { modelVector } from './model-vector';
import { DEFAULT_RANKING_CONFIG, rankingConfig } from './ranking-config';
import { UNIVERSAL_PHASES, type UniversalPhase } from './universal-phase';

// The same query in every phase over one candidate of each memory type, all equally relevant
// and with equal priors (same confidence, all created now, so each type's half-life leaves their
// recency at 1): the order must follow seed 002's
// PHASE_WEIGHTS row of the phase. Equally relevant exactly: the relevance is the cosine alone
// (the same vector for all), not the rank fusion — whose positions always separate candidates a
// little, and since issue #23 the damped phase weight only reorders near-ties (1.3 vs 1.4 is
// ×1.02), smaller than what positions in two lists of 16 give.

const QUERY = modelVector(MODEL, [1, 0]);
const ONE_OF_EACH = MEMORY_TYPES.map((type) =>
  memory({
    memoryId: type,
    memoryType: type,
    embedding: [1, 0],
    embeddingModel: MODEL,
    createdAt: NOW,
  }),
);
const IDS = ONE_OF_EACH.map((m) => ({ id: m.memoryId }));

const COSINE_ONLY = rankingConfig({ relevanceMix: { rrf: 0, cosine: 1 } });

function rank(
  phase: UniversalPhase,
  overrides: Partial<RankMemoriesInput> = {},
  config = COSINE_ONLY,
): MemoryType[] {
  return rankMemories(
    {
      filter: { ...SCOPE },
      phase,
      now: NOW,
      bm25: IDS,
      knn: [...IDS].reverse(),
      query: QUERY,
      memories: ONE_OF_EACH,
      ...overrides,
    },
    config,
  ).map((ranked) => ranked.memory.memoryType);
}

const weights = (phase: UniversalPhase, types: MemoryType[]) =>
  types.map((type) => phaseWeight(PHASE_WEIGHTS, phase, type));

describe('phase weighting orders memory types as PHASE_WEIGHTS intends', () => {
  it.each(UNIVERSAL_PHASES)('should rank equally relevant memories by the %s row', (phase) => {
    const order = rank(phase);
    expect(order).toHaveLength(MEMORY_TYPES.length);
    const got = weights(phase, order);
    expect(got).toEqual([...got].sort((a, b) => b - a));
  });

  it('should reorder the same candidates from one phase to the next', () => {
    const top3 = (phase: UniversalPhase) => rank(phase).slice(0, 3);
    expect(top3('define')).toEqual(expect.arrayContaining(['requirement', 'workflow_recipe']));
    expect(top3('implement')[0]).toBe('gotcha');
    expect(top3('validate')).toEqual(expect.arrayContaining(['error_pattern', 'e2e_observation']));
    expect(top3('reflect')[0]).toBe('work_unit_outcome');
    expect(rank('explore').indexOf('decision')).toBeLessThan(rank('explore').indexOf('gotcha'));
    expect(rank('implement').indexOf('gotcha')).toBeLessThan(rank('implement').indexOf('decision'));
  });

  it('should let the favoured type overtake a somewhat more relevant one', () => {
    // The decision matches exactly (cosine 1, first in both lists), the gotcha less (0.8, second).
    const candidates = [
      memory({
        memoryId: 'decision',
        memoryType: 'decision',
        embedding: [1, 0],
        embeddingModel: MODEL,
      }),
      memory({
        memoryId: 'gotcha',
        memoryType: 'gotcha',
        embedding: [0.8, 0.6],
        embeddingModel: MODEL,
      }),
    ];
    const hits = [{ id: 'decision' }, { id: 'gotcha' }];
    const order = (phase: UniversalPhase) =>
      rank(phase, { bm25: hits, knn: hits, memories: candidates }, DEFAULT_RANKING_CONFIG);
    expect(order('explore')).toEqual(['decision', 'gotcha']); // 1.4 vs 0.8
    expect(order('implement')).toEqual(['gotcha', 'decision']); // 0.7 vs 1.5
  });
});
