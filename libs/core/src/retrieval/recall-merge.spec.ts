import { describe, expect, it } from 'vitest';
import { NEUTRAL_USE, scoreSubject } from './hybrid-score';
import type { Provenance } from './provenance';
import { DEFAULT_RANKING_CONFIG as CONFIG } from './ranking-config';
import { contentStems, mergeAcrossTiers, queryCoverage, type MergeableHit } from './recall-merge';
import type { RecallTier } from './recall-request';
import { NOW } from './testing/fixtures';

interface Hit extends MergeableHit {
  text: string;
  confidence: number | null;
}

/**
 * A hit of a tier, scored by the core from its place in its tier (fusedNormalised, lexical only)
 * with equal priors: its text, its events, and for memories a confidence.
 */
function hit(
  tier: RecallTier,
  id: string,
  fusedNormalised: number,
  text: string,
  provenance: Partial<Provenance> = {},
  confidence: number | null = tier === 'memories' ? 0.8 : null,
): Hit {
  const score = scoreSubject(
    { id, memoryType: null, lastAccessedAt: NOW, accessCount: 0, stale: false, use: NEUTRAL_USE },
    {
      basis: 'query',
      fused: {
        id,
        bm25: 1,
        bm25Rank: 1,
        knn: 0,
        knnRank: 0,
        cosineStatus: 'no_query_vector',
        fused: fusedNormalised,
        fusedNormalised,
        relevance: fusedNormalised,
      },
    },
    { phase: 'explore', now: NOW, maxAccessCount: 0 },
    CONFIG,
  );
  return {
    tier,
    id,
    score,
    text,
    confidence,
    provenance: {
      tenantId: 't',
      projectId: 'p',
      sessionIds: ['s'],
      episodeIds: [],
      promptIds: [],
      eventIds: [],
      memoryId: null,
      commitSha: null,
      ...provenance,
    },
  };
}

function merge(query: string, lists: Hit[][], k = 10) {
  return mergeAcrossTiers<Hit>(
    { lists, k, query, textOf: (h) => h.text, confidenceOf: (h) => h.confidence },
    CONFIG,
  );
}

const ids = (groups: ReturnType<typeof merge>) => groups.map((g) => g.representative.id);

describe('query coverage', () => {
  it('should weigh the query words by their rarity among the candidates', () => {
    const docs = ['fake timers refresh', 'refresh token', 'refresh page'].map(contentStems);
    const [all, one, none] = queryCoverage(contentStems('the fake refresh timer'), [
      docs[0],
      docs[1],
      contentStems('nothing here'),
    ]);
    expect(all).toBe(1); // stems: "timers" and "timer" are one word
    expect(one).toBeGreaterThan(0);
    expect(one).toBeLessThan(0.5); // "refresh" is in most candidates: it says little
    expect(none).toBe(0);
    expect(queryCoverage(contentStems('the and of'), docs)).toEqual([0, 0, 0]);
  });

  it('should skip blobs, on which Porter2 is quadratic (issue #19)', () => {
    const started = performance.now();
    const found = contentStems(`refresh ${'aB3'.repeat(20_000)} tokens`);
    expect(performance.now() - started).toBeLessThan(500);
    expect([...found]).toEqual(['refresh', 'token']);
  });
});

describe('mergeAcrossTiers', () => {
  it('should put every tier on one scale: the result with the query words first, whatever its rank in its tier', () => {
    // each is first in its own tier; only the memory says what was asked
    const merged = merge('fake timers in the refresh tests', [
      [hit('memories', 'm1', 0.9, 'use vitest fake timers in the refresh tests')],
      [hit('turns', 't1', 1, 'the refresh button is broken', { eventIds: ['p-9'] })],
    ]);
    expect(ids(merged)).toEqual(['m1', 't1']);
    expect(merged[0].score.relevance).toBeGreaterThan(merged[1].score.relevance);
    expect(merged[0].coverage).toBe(1);
  });

  it('should collapse an episode, its own turns and the memory distilled from them into one result', () => {
    const merged = merge('refresh token race', [
      [hit('memories', 'm1', 0.9, 'refresh token race: take the mutex', { eventIds: ['p-2'] })],
      [
        hit('episodes', 'e1', 1, 'refresh token race with logout', {
          episodeIds: ['e1'],
          promptIds: [1, 2, 3],
          eventIds: ['p-1', 'p-2', 'p-3'],
        }),
      ],
      [
        hit('turns', 't1', 1, 'the refresh token race again', {
          promptIds: [1],
          eventIds: ['p-1'],
        }),
        hit('turns', 't3', 0.9, 'refresh token race', { promptIds: [3], eventIds: ['p-3'] }),
        hit('turns', 't9', 0.5, 'refresh the token list', { promptIds: [9], eventIds: ['p-9'] }),
      ],
    ]);
    expect(merged).toHaveLength(2);
    const [group, other] = merged;
    expect(group.members.map((m) => m.id).sort()).toEqual(['e1', 'm1', 't1', 't3']);
    // the memory states the lesson: shown while within the band of the best member
    expect(group.representative.id).toBe('m1');
    expect(group.best.id).toBe('e1'); // ties with t1: the episode before the turn
    expect(group.finalScore).toBeGreaterThan(group.score.finalScore); // ranked by its best
    expect(group.provenance).toMatchObject({ episodeIds: ['e1'], promptIds: [1, 2, 3] });
    expect([...group.provenance.eventIds].sort()).toEqual(['p-1', 'p-2', 'p-3']);
    expect(other.representative.id).toBe('t9');
  });

  it('should show the best member when no memory scores within the band of it', () => {
    const merged = merge('refresh token race logout', [
      [hit('memories', 'm1', 0.2, 'a template: modified token.ts', { eventIds: ['p-1'] })],
      [hit('turns', 't1', 1, 'refresh token race with logout', { eventIds: ['p-1'] })],
    ]);
    expect(merged).toHaveLength(1);
    expect(merged[0].representative.id).toBe('t1');
    expect(merged[0].best.id).toBe('t1');
  });

  it('should never weld two episodes into one result through a memory spanning both', () => {
    // a work state (or a fact reinforced in two sessions) carries the events of both episodes
    const span = hit('memories', 'w', 1, 'auth token refresh: step 2 of 4', {
      eventIds: ['a-1', 'b-1'],
    });
    const merged = merge('auth token refresh', [
      [span],
      [
        hit('episodes', 'ea', 0.9, 'auth token refresh race', {
          episodeIds: ['ea'],
          eventIds: ['a-1'],
        }),
        hit('episodes', 'eb', 0.8, 'auth token refresh mutex', {
          episodeIds: ['eb'],
          eventIds: ['b-1'],
        }),
      ],
    ]);
    expect(merged.map((g) => g.members.map((m) => m.id))).toEqual([['w', 'ea'], ['eb']]);
    expect(merged[1].provenance.eventIds).toEqual(['b-1']);
  });

  it('should never group memories with each other: two memories of one prompt are two statements', () => {
    const merged = merge('refresh token', [
      [
        hit('memories', 'm-gotcha', 1, 'refresh token needs the mutex', { eventIds: ['p-1'] }),
        hit('memories', 'm-decision', 0.9, 'refresh token moved to the session', {
          eventIds: ['p-1'],
        }),
      ],
    ]);
    expect(ids(merged)).toEqual(['m-gotcha', 'm-decision']);
  });

  it('should leave the relevance as ranked when the query has no content word to cover', () => {
    const t = hit('turns', 't1', 0.8, 'how is it', { eventIds: ['p-1'] });
    const [only] = merge('how is it', [[t]]);
    expect(only.score.relevance).toBe(t.score.relevance);
    expect(only.finalScore).toBeCloseTo(t.score.finalScore, 12);
  });

  it('should keep k results, ties by relevance, then tier order, then id', () => {
    const same = (tier: RecallTier, id: string, event: string) =>
      hit(tier, id, 1, 'refresh token', { eventIds: [event] }, null);
    const merged = merge(
      'refresh token',
      [[same('turns', 't2', 'x2'), same('turns', 't1', 'x1')], [same('episodes', 'e1', 'x3')]],
      2,
    );
    expect(ids(merged)).toEqual(['e1', 't1']);
  });
});
