import { DEFAULT_RANKING_CONFIG } from './ranking-config';
import { describe, expect, it } from 'vitest';
import { modelVector } from './model-vector';
import { rankEpisodes } from './rank-episodes';
import { matchWorkflowRecipes, workflowRecipeFilter } from './workflow-recipes';
import { DAY, episode, memory, MODEL, NOW, SCOPE } from './testing/fixtures';

describe('rankEpisodes', () => {
  it('should rank episodes with the memory formula, phase weight 1 and neutral use (by hand)', () => {
    const [top, second] = rankEpisodes(
      {
        scope: SCOPE,
        phase: 'implement',
        now: NOW,
        bm25: [{ id: 'e1' }],
        knn: [{ id: 'e2' }, { id: 'e1' }],
        query: modelVector(MODEL, [1, 0]),
        episodes: [
          episode({ episodeId: 'e1', endedAt: NOW - 30 * DAY }),
          episode({ episodeId: 'e2', endedAt: NOW }),
          episode({ episodeId: 'e3', tenantId: 'tenant-b' }),
        ],
        vectors: new Map([
          ['e1', modelVector(MODEL, [1, 0])],
          ['e2', modelVector(MODEL, [0, 1])],
        ]),
      },
      DEFAULT_RANKING_CONFIG,
    );
    // relevance · (0.9 + 0.1·prior), prior = (0.25·recency + 0.15·use) / 0.4, use 0.5 (no evidence)
    // e1: relevance (43/44 + 1)/2 = 0.98864, recency e^-1: prior 0.41742 → 0.93104
    expect(top.episode.episodeId).toBe('e1');
    const prior = (recency: number) => (0.25 * recency + 0.15 * 0.5) / 0.4;
    expect(top.score.finalScore).toBeCloseTo(
      ((43 / 44 + 1) / 2) * (0.9 + 0.1 * prior(Math.exp(-1))),
      12,
    );
    expect(top.score.finalScore).toBeCloseTo(0.93104, 5);
    expect(top.score).toMatchObject({ phaseWeight: 1, frequency: 0.5, memoryType: null });
    // e2: relevance 0.5/2 = 0.25 (orthogonal), recency 1: prior 0.8125 → 0.25·0.98125 = 0.24531
    expect(second.score.finalScore).toBeCloseTo(0.25 * 0.98125, 12);
    expect(top.provenance.episodeIds).toEqual(['e1']);
  });

  it('should apply the temporal constraint and the scope', () => {
    const ranked = rankEpisodes(
      {
        scope: SCOPE,
        phase: 'explore',
        now: NOW,
        bm25: [{ id: 'old' }, { id: 'new' }, { id: 'foreign' }],
        knn: null,
        query: null,
        episodes: [
          episode({ episodeId: 'old', startedAt: NOW - 9 * DAY, endedAt: NOW - 8 * DAY }),
          episode({ episodeId: 'new', startedAt: NOW - DAY, endedAt: NOW }),
          episode({
            episodeId: 'foreign',
            projectId: 'repo-b',
            startedAt: NOW - DAY,
            endedAt: NOW,
          }),
        ],
        vectors: new Map(),
        temporal: { kind: 'range', fromMs: NOW - 2 * DAY, toMs: NOW },
      },
      DEFAULT_RANKING_CONFIG,
    );
    expect(ranked.map((r) => r.episode.episodeId)).toEqual(['new']);
  });
});

describe('matchWorkflowRecipes', () => {
  it('should return at most two recipes, never a stale one or another type', () => {
    const memories = [
      memory({ memoryId: 'r1', memoryType: 'workflow_recipe' }),
      memory({ memoryId: 'r2', memoryType: 'workflow_recipe', staleAt: NOW }),
      memory({ memoryId: 'r3', memoryType: 'workflow_recipe' }),
      memory({ memoryId: 'r4', memoryType: 'workflow_recipe' }),
      memory({ memoryId: 'g1', memoryType: 'gotcha' }),
    ];
    const matched = matchWorkflowRecipes(
      {
        scope: SCOPE,
        phase: 'define',
        now: NOW,
        bm25: ['g1', 'r2', 'r1', 'r3', 'r4'].map((id) => ({ id })),
        knn: null,
        query: null,
        memories,
      },
      DEFAULT_RANKING_CONFIG,
    );
    expect(matched.map((r) => r.memory.memoryId)).toEqual(['r1', 'r3']);
    expect(workflowRecipeFilter(SCOPE)).toEqual({
      ...SCOPE,
      types: ['workflow_recipe'],
      stale: 'exclude',
    });
  });
});
