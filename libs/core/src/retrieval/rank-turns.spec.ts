import { DEFAULT_RANKING_CONFIG } from './ranking-config';
import { describe, expect, it } from 'vitest';
import { modelVector } from './model-vector';
import { rankTurns, turnProvenance } from './rank-turns';
import { DAY, MODEL, NOW, prompt, SCOPE } from './testing/fixtures';

describe('rankTurns', () => {
  it('should score turns like episodes: recency from when typed, neutral use, weight 1 (by hand)', () => {
    const [top, second] = rankTurns(
      {
        scope: SCOPE,
        phase: 'implement',
        now: NOW,
        bm25: [{ id: 't1' }],
        knn: [{ id: 't2' }, { id: 't1' }],
        query: modelVector(MODEL, [1, 0]),
        turns: [prompt({ eventId: 't1', timestamp: NOW - 30 * DAY }), prompt({ eventId: 't2' })],
        vectors: new Map([
          ['t1', modelVector(MODEL, [1, 0])],
          ['t2', modelVector(MODEL, [0, 1])],
        ]),
      },
      DEFAULT_RANKING_CONFIG,
    );
    expect(top.turn.eventId).toBe('t1');
    // relevance · (0.9 + 0.1·prior), prior = (0.25·recency + 0.15·0.5) / 0.4: raw history has no
    // evidence of use either way (0.5)
    const prior = (recency: number) => (0.25 * recency + 0.15 * 0.5) / 0.4;
    expect(top.score.finalScore).toBeCloseTo(
      ((43 / 44 + 1) / 2) * (0.9 + 0.1 * prior(Math.exp(-1))),
      12,
    );
    expect(top.score).toMatchObject({ phaseWeight: 1, frequency: 0.5, memoryType: null });
    // t2: relevance (rank 1 in one of two lists: 0.5) / 2 = 0.25, orthogonal, recency 1
    expect(second.score.finalScore).toBeCloseTo(0.25 * (0.9 + 0.1 * prior(1)), 12);
  });

  it('should drop other scopes, agent prompts and turns outside the time range', () => {
    const ranked = rankTurns(
      {
        scope: SCOPE,
        phase: 'explore',
        now: NOW,
        bm25: ['in', 'foreign', 'agent', 'old'].map((id) => ({ id })),
        knn: null,
        query: null,
        turns: [
          prompt({ eventId: 'in' }),
          prompt({ eventId: 'foreign', tenantId: 'tenant-b' }),
          prompt({ eventId: 'agent', source: 'agent' }),
          prompt({ eventId: 'old', timestamp: NOW - 5 * DAY }),
        ],
        vectors: new Map(),
        temporal: { kind: 'range', fromMs: NOW - DAY, toMs: NOW },
      },
      DEFAULT_RANKING_CONFIG,
    );
    expect(ranked.map((r) => r.turn.eventId)).toEqual(['in']);
  });

  it('should keep only turns of the given sessions and honour the limit', () => {
    const ranked = rankTurns(
      {
        scope: SCOPE,
        phase: 'explore',
        now: NOW,
        bm25: [{ id: 'a' }, { id: 'b' }, { id: 'c' }],
        knn: null,
        query: null,
        turns: [
          prompt({ eventId: 'a', sessionId: 's1' }),
          prompt({ eventId: 'b', sessionId: 's2' }),
          prompt({ eventId: 'c', sessionId: 's1' }),
        ],
        vectors: new Map(),
        temporal: { kind: 'sessions', sessionIds: ['s1'] },
        limit: 1,
      },
      DEFAULT_RANKING_CONFIG,
    );
    expect(ranked.map((r) => r.turn.eventId)).toEqual(['a']);
  });

  it('should refuse an unscoped recall', () => {
    expect(() =>
      rankTurns(
        {
          scope: { tenantId: 'tenant-a', projectId: ' ' },
          phase: 'explore',
          now: NOW,
          bm25: [],
          knn: null,
          query: null,
          turns: [],
          vectors: new Map(),
        },
        DEFAULT_RANKING_CONFIG,
      ),
    ).toThrow(/projectId/);
  });
});

describe('turnProvenance', () => {
  it('should trace a turn to its session, prompt and event, with the episodes given', () => {
    expect(turnProvenance(prompt({ eventId: 'ev', promptId: 7 }), ['ep-1'])).toEqual({
      tenantId: SCOPE.tenantId,
      projectId: SCOPE.projectId,
      sessionIds: ['session-1'],
      episodeIds: ['ep-1'],
      promptIds: [7],
      eventIds: ['ev'],
      memoryId: null,
      commitSha: null,
    });
  });
});
