import { describe, expect, it } from 'vitest';
import {
  chooseParentEpisode,
  RecentEpisodeIndex,
  walkChain,
  type ChainCandidate,
  type RecentEpisodeIndexState,
} from './chaining';
import { intentKeywords } from './intent-keywords';

const HOUR = 60 * 60 * 1000;
const NOW = Date.UTC(2026, 2, 3, 12, 0, 0);

// Seed 003: "Started debugging memory leak" → "Continued debugging, found root cause" → …
const LEAK = intentKeywords('debugging the memory leak in the session cache');
const LEAK_AGAIN = intentKeywords('debugging the memory leak in the session cache again');
const BUILD = intentKeywords('speed up the docker build for the gateway image');

function candidate(
  episodeId: string,
  hoursAgo: number,
  keywords: readonly string[],
  extra: Partial<ChainCandidate> = {},
): ChainCandidate {
  return { episodeId, projectId: 'repo-a', closedAt: NOW - hoursAgo * HOUR, keywords, ...extra };
}

describe('chooseParentEpisode', () => {
  it('should auto-detect the parent from a similar recent episode (seed 003)', () => {
    const choice = chooseParentEpisode({
      keywords: LEAK_AGAIN,
      projectId: 'repo-a',
      now: NOW,
      candidates: [candidate('day-1', 20, LEAK), candidate('other', 2, BUILD)],
    });
    expect(choice).toEqual({
      parentEpisodeId: 'day-1',
      source: 'auto',
      similarity: 1,
      measure: 'jaccard',
      considered: 2,
    });
  });

  it('should not chain when the topic is different, reporting the best similarity seen', () => {
    const choice = chooseParentEpisode({
      keywords: LEAK,
      projectId: 'repo-a',
      now: NOW,
      candidates: [candidate('build', 1, BUILD)],
    });
    expect(choice).toMatchObject({ parentEpisodeId: null, source: 'none', considered: 1 });
    expect(choice.similarity).toBeLessThan(0.85);
  });

  it('should not chain to an episode closed more than 48 hours ago', () => {
    const choice = chooseParentEpisode({
      keywords: LEAK,
      projectId: 'repo-a',
      now: NOW,
      candidates: [candidate('old', 48 + 1 / 3600_000, LEAK)],
    });
    expect(choice).toMatchObject({ parentEpisodeId: null, considered: 0 });
    expect(
      chooseParentEpisode({
        keywords: LEAK,
        projectId: 'repo-a',
        now: NOW,
        candidates: [candidate('edge', 48, LEAK)],
      }).parentEpisodeId,
    ).toBe('edge');
  });

  it('should honour a configured window and threshold', () => {
    const input = {
      keywords: ['a', 'b'],
      projectId: 'repo-a',
      now: NOW,
      candidates: [candidate('half', 30, ['a', 'c'])],
    };
    expect(chooseParentEpisode(input, { minSimilarity: 0.3 }).parentEpisodeId).toBe('half');
    expect(chooseParentEpisode(input, { minSimilarity: 0.3, maxAgeMs: 24 * HOUR })).toMatchObject({
      parentEpisodeId: null,
      considered: 0,
    });
  });

  it('should need a similarity strictly above the threshold', () => {
    const input = {
      keywords: ['a', 'b'],
      projectId: 'repo-a',
      now: NOW,
      candidates: [candidate('third', 1, ['a', 'c'])],
    };
    expect(chooseParentEpisode(input, { minSimilarity: 1 / 3 }).parentEpisodeId).toBeNull();
  });

  it('should let an explicit parent override auto-detection', () => {
    expect(
      chooseParentEpisode({
        keywords: LEAK,
        projectId: 'repo-a',
        now: NOW,
        explicitParentId: 'chosen-by-agent',
        candidates: [candidate('day-1', 1, LEAK)],
      }),
    ).toEqual({
      parentEpisodeId: 'chosen-by-agent',
      source: 'explicit',
      similarity: null,
      measure: null,
      considered: 0,
    });
  });

  it('should ignore a blank explicit parent', () => {
    expect(
      chooseParentEpisode({
        keywords: LEAK,
        projectId: 'repo-a',
        now: NOW,
        explicitParentId: '  ',
        candidates: [candidate('day-1', 1, LEAK)],
      }).source,
    ).toBe('auto');
  });

  it('should only consider episodes of the same project, closed before now, other than itself', () => {
    const choice = chooseParentEpisode({
      keywords: LEAK,
      projectId: 'repo-a',
      episodeId: 'self',
      now: NOW,
      candidates: [
        candidate('elsewhere', 1, LEAK, { projectId: 'repo-b' }),
        candidate('future', -1, LEAK),
        candidate('self', 1, LEAK),
      ],
    });
    expect(choice).toEqual({
      parentEpisodeId: null,
      source: 'none',
      similarity: null,
      measure: null,
      considered: 0,
    });
  });

  it('should give no parent without candidates', () => {
    expect(
      chooseParentEpisode({ keywords: [], projectId: 'repo-a', now: NOW, candidates: [] }),
    ).toMatchObject({ parentEpisodeId: null, source: 'none', considered: 0 });
  });

  it('should compare embeddings by cosine when both sides have one', () => {
    const choice = chooseParentEpisode({
      keywords: LEAK,
      embedding: [0.6, 0.8],
      projectId: 'repo-a',
      now: NOW,
      candidates: [
        candidate('same-meaning', 3, BUILD, { embedding: [0.6, 0.8] }),
        candidate('no-embedding', 1, BUILD),
      ],
    });
    expect(choice).toMatchObject({
      parentEpisodeId: 'same-meaning',
      measure: 'cosine',
      considered: 2,
    });
    expect(choice.similarity).toBeCloseTo(1, 12);
  });

  it('should break ties by the more recently closed, then the smaller id', () => {
    const tied = (candidates: ChainCandidate[]): string | null =>
      chooseParentEpisode({ keywords: LEAK, projectId: 'repo-a', now: NOW, candidates })
        .parentEpisodeId;
    expect(tied([candidate('older', 5, LEAK), candidate('newer', 1, LEAK)])).toBe('newer');
    expect(tied([candidate('b', 1, LEAK), candidate('a', 1, LEAK)])).toBe('a');
    expect(tied([candidate('a', 1, LEAK), candidate('b', 1, LEAK)])).toBe('a');
  });

  it('should prefer the most similar candidate over a more recent one', () => {
    const near = [...LEAK.slice(0, -1), 'extra'];
    const choice = chooseParentEpisode(
      {
        keywords: LEAK,
        projectId: 'repo-a',
        now: NOW,
        candidates: [candidate('close-but-newer', 1, near), candidate('exact', 10, LEAK)],
      },
      { minSimilarity: 0.5 },
    );
    expect(choice.parentEpisodeId).toBe('exact');
  });
});

describe('chaining three episodes of one topic (issue #20)', () => {
  // The arc's opening words stay the same; the second episode's bag also took in what was found.
  const OPENING = intentKeywords('debugging the memory leak in the session cache');
  const FOUND = intentKeywords(
    'debugging the memory leak in the session cache, found the root cause in the eviction timer',
  );

  it('should form a chain (2 → 1, 3 → 2), not a star around the first', () => {
    const index = new RecentEpisodeIndex();
    const open = (episodeId: string, at: number): string | null =>
      chooseParentEpisode({
        keywords: OPENING,
        projectId: 'repo-a',
        episodeId,
        now: at,
        candidates: index.candidates('repo-a', at),
      }).parentEpisodeId;
    const close = (episodeId: string, at: number, bag: readonly string[], parent: string | null) =>
      index.add(
        { episodeId, projectId: 'repo-a', closedAt: at, keywords: bag, parentEpisodeId: parent },
        at,
      );

    expect(open('ep-1', NOW)).toBeNull();
    close('ep-1', NOW + HOUR, OPENING, null);
    const parentOf2 = open('ep-2', NOW + 7 * HOUR);
    close('ep-2', NOW + 8 * HOUR, FOUND, parentOf2);
    const parentOf3 = open('ep-3', NOW + 14 * HOUR);

    expect(parentOf2).toBe('ep-1');
    expect(parentOf3).toBe('ep-2');
    const parents = new Map([
      ['ep-1', null],
      ['ep-2', parentOf2],
      ['ep-3', parentOf3],
    ]);
    expect(walkChain('ep-3', (id) => parents.get(id)).episodeIds).toEqual(['ep-1', 'ep-2', 'ep-3']);
  });

  it('should follow the chain to its latest episode, not to another chain or a later sibling', () => {
    const choice = chooseParentEpisode({
      keywords: LEAK,
      projectId: 'repo-a',
      now: NOW,
      candidates: [
        candidate('root', 10, LEAK),
        candidate('child', 6, BUILD, { parentEpisodeId: 'root' }),
        candidate('grandchild', 3, BUILD, { parentEpisodeId: 'child' }),
        candidate('other-root', 1, BUILD),
        // Closed before the child it would continue: not a continuation.
        candidate('earlier', 8, BUILD, { parentEpisodeId: 'grandchild' }),
      ],
    });
    expect(choice).toMatchObject({ parentEpisodeId: 'grandchild', source: 'auto', similarity: 1 });
  });
});

describe('RecentEpisodeIndex', () => {
  it('should forget evicted episodes: remove() finds them no more, re-adding works', () => {
    const index = new RecentEpisodeIndex({ maxPerProject: 2 });
    index.add(candidate('old', 3, ['a']), NOW);
    index.add(candidate('mid', 2, ['b']), NOW);
    index.add(candidate('new', 1, ['c']), NOW);
    index.add(candidate('other', 1, ['d'], { projectId: 'repo-b' }), NOW);
    expect(index.remove('old')).toBe(false);
    expect(index.remove('mid')).toBe(true);
    expect(index.remove('mid')).toBe(false);
    expect(index.candidates('repo-a', NOW).map((e) => e.episodeId)).toEqual(['new']);
    index.add(candidate('old', 3, ['a']), NOW);
    expect(index.size).toBe(3);
  });

  it('should hold closed episodes per project, newest first', () => {
    const index = new RecentEpisodeIndex();
    index.add(candidate('a1', 5, LEAK), NOW);
    index.add(candidate('a2', 1, LEAK), NOW);
    index.add(candidate('b1', 2, BUILD, { projectId: 'repo-b' }), NOW);
    expect(index.candidates('repo-a', NOW).map((e) => e.episodeId)).toEqual(['a2', 'a1']);
    expect(index.candidates('repo-b', NOW).map((e) => e.episodeId)).toEqual(['b1']);
    expect(index.candidates('repo-c', NOW)).toEqual([]);
    expect(index.size).toBe(3);
  });

  it('should evict episodes older than 48 hours when adding and pruning', () => {
    const index = new RecentEpisodeIndex();
    index.add(candidate('old', 47, LEAK), NOW);
    index.add(candidate('new', 1, LEAK), NOW + 2 * HOUR);
    expect(index.candidates('repo-a', NOW + 2 * HOUR).map((e) => e.episodeId)).toEqual(['new']);
    expect(index.size).toBe(1);
    expect(index.prune(NOW + 60 * HOUR)).toBe(1);
    expect(index.size).toBe(0);
    expect(index.toJSON()).toEqual({ projects: [] });
  });

  it('should leave stale episodes out of the candidates without evicting them', () => {
    const index = new RecentEpisodeIndex();
    index.add(candidate('e', 1, LEAK), NOW);
    expect(index.candidates('repo-a', NOW + 49 * HOUR)).toEqual([]);
    expect(index.size).toBe(1);
  });

  it('should cap each project at the newest episodes', () => {
    const index = new RecentEpisodeIndex({ maxPerProject: 2 });
    for (const [id, hoursAgo] of [
      ['e1', 4],
      ['e2', 3],
      ['e3', 1],
      ['e0', 6],
    ] as const) {
      index.add(candidate(id, hoursAgo, LEAK), NOW);
    }
    index.add(candidate('other', 9, LEAK, { projectId: 'repo-b' }), NOW);
    expect(index.candidates('repo-a', NOW).map((e) => e.episodeId)).toEqual(['e3', 'e2']);
    expect(index.size).toBe(3);
  });

  it('should replace an episode added twice', () => {
    const index = new RecentEpisodeIndex();
    index.add(candidate('e', 5, LEAK), NOW);
    index.add(candidate('e', 1, BUILD), NOW);
    expect(index.candidates('repo-a', NOW)).toEqual([candidate('e', 1, BUILD)]);
    expect(index.remove('e')).toBe(true);
    expect(index.remove('e')).toBe(false);
  });

  it('should round-trip through plain JSON with deterministic order', () => {
    const index = new RecentEpisodeIndex();
    index.add(candidate('z', 1, LEAK, { projectId: 'repo-z', embedding: [0.1, 0.2] }), NOW);
    index.add(candidate('a', 2, BUILD), NOW);
    index.add(candidate('n', 2, LEAK, { embedding: null }), NOW);
    const state = JSON.parse(JSON.stringify(index.toJSON())) as RecentEpisodeIndexState;
    expect(state).toEqual({
      projects: [
        {
          projectId: 'repo-a',
          episodes: [candidate('a', 2, BUILD), candidate('n', 2, LEAK, { embedding: null })],
        },
        {
          projectId: 'repo-z',
          episodes: [candidate('z', 1, LEAK, { projectId: 'repo-z', embedding: [0.1, 0.2] })],
        },
      ],
    });
    expect(RecentEpisodeIndex.fromJSON(state).toJSON()).toEqual(state);
  });

  it('should apply the caps of new options when restoring', () => {
    const index = new RecentEpisodeIndex();
    for (const id of ['a', 'b', 'c']) index.add(candidate(id, 1, LEAK), NOW);
    const restored = RecentEpisodeIndex.fromJSON(index.toJSON(), { maxPerProject: 1 });
    expect(restored.candidates('repo-a', NOW).map((e) => e.episodeId)).toEqual(['a']);
  });

  it('should not share arrays with callers', () => {
    const keywords = ['leak'];
    const index = new RecentEpisodeIndex();
    index.add(candidate('e', 1, keywords), NOW);
    keywords.push('mutated');
    const state = index.toJSON();
    (state.projects[0].episodes[0].keywords as string[]).push('mutated too');
    expect(index.candidates('repo-a', NOW)[0].keywords).toEqual(['leak']);
  });

  it('should feed chooseParentEpisode', () => {
    const index = new RecentEpisodeIndex();
    index.add(candidate('day-1', 30, LEAK), NOW - 10 * HOUR);
    index.add(candidate('build', 2, BUILD), NOW);
    expect(
      chooseParentEpisode({
        keywords: LEAK_AGAIN,
        projectId: 'repo-a',
        now: NOW,
        candidates: index.candidates('repo-a', NOW),
      }).parentEpisodeId,
    ).toBe('day-1');
  });
});

describe('walkChain', () => {
  const parents: Record<string, string | null> = { c: 'b', b: 'a', a: null };
  const lookup =
    (links: Record<string, string | null>) =>
    (id: string): string | null | undefined =>
      Object.prototype.hasOwnProperty.call(links, id) ? links[id] : undefined;

  it('should return the chain root first (seed 003 get_episode_chain)', () => {
    expect(walkChain('c', lookup(parents))).toEqual({
      episodeIds: ['a', 'b', 'c'],
      cycleAt: null,
      missing: null,
      truncated: false,
    });
  });

  it('should return a root alone', () => {
    expect(walkChain('a', lookup(parents)).episodeIds).toEqual(['a']);
    expect(walkChain('r', lookup({ r: '' })).episodeIds).toEqual(['r']);
  });

  it('should give an empty chain for an unknown episode', () => {
    expect(walkChain('nope', lookup(parents))).toEqual({
      episodeIds: [],
      cycleAt: null,
      missing: 'nope',
      truncated: false,
    });
  });

  it('should stop at a parent that is not known', () => {
    expect(walkChain('c', lookup({ c: 'b' }))).toMatchObject({
      episodeIds: ['c'],
      missing: 'b',
    });
  });

  it('should stop at a cycle and report it instead of throwing', () => {
    expect(walkChain('a', lookup({ a: 'b', b: 'c', c: 'a' }))).toEqual({
      episodeIds: ['c', 'b', 'a'],
      cycleAt: 'a',
      missing: null,
      truncated: false,
    });
    expect(walkChain('s', lookup({ s: 's' }))).toMatchObject({ episodeIds: ['s'], cycleAt: 's' });
  });

  it('should stop at maxDepth episodes and say so', () => {
    expect(walkChain('c', lookup(parents), 2)).toEqual({
      episodeIds: ['b', 'c'],
      cycleAt: null,
      missing: null,
      truncated: true,
    });
    expect(walkChain('c', lookup(parents), 3).truncated).toBe(false);
  });

  it('should refuse a maxDepth that is not a positive integer', () => {
    expect(() => walkChain('c', lookup(parents), 0)).toThrow(RangeError);
    expect(() => walkChain('c', lookup(parents), 1.5)).toThrow(RangeError);
  });
});
