import { DEFAULT_RANKING_CONFIG } from './ranking-config';
import { describe, expect, it } from 'vitest';
import type { Episode } from '@engram/contracts';
import { resolveEpisodeChain, selectEpisodeSequence, sequenceFetchSize } from './episode-sequence';
import { DAY, episode, NOW, SCOPE } from './testing/fixtures';
import { renderTopicReplay } from './topic-replay';

describe('selectEpisodeSequence', () => {
  it('should keep relevance above 0.5, order chronologically and trim to the limit', () => {
    const candidates = [
      { episode: episode({ episodeId: 'day3', startedAt: NOW - 1 * DAY }), relevance: 0.95 },
      { episode: episode({ episodeId: 'day1', startedAt: NOW - 3 * DAY }), relevance: 0.7 },
      { episode: episode({ episodeId: 'weak', startedAt: NOW - 4 * DAY }), relevance: 0.5 },
      { episode: episode({ episodeId: 'day2', startedAt: NOW - 2 * DAY }), relevance: 0.8 },
      {
        episode: episode({ episodeId: 'foreign', tenantId: 'tenant-b', startedAt: NOW - 5 * DAY }),
        relevance: 0.99,
      },
    ];
    const sequence = selectEpisodeSequence(SCOPE, candidates, { limit: 2 }, DEFAULT_RANKING_CONFIG);
    expect(sequence.map((s) => s.episode.episodeId)).toEqual(['day1', 'day2']);
    expect(
      selectEpisodeSequence(SCOPE, candidates, {}, DEFAULT_RANKING_CONFIG).map(
        (s) => s.episode.episodeId,
      ),
    ).toEqual(['day1', 'day2', 'day3']);
    expect(
      selectEpisodeSequence(SCOPE, candidates, { minRelevance: 0.4 }, DEFAULT_RANKING_CONFIG)[0]
        .episode.episodeId,
    ).toBe('weak');
  });

  it('should over-fetch twice the limit (seed 003)', () => {
    expect(sequenceFetchSize(5, DEFAULT_RANKING_CONFIG)).toBe(10);
    expect(sequenceFetchSize(0, DEFAULT_RANKING_CONFIG)).toBe(20); // 0 = the default limit of 10
  });
});

describe('resolveEpisodeChain', () => {
  const store = new Map<string, Episode>(
    [
      episode({ episodeId: 'a', parentEpisodeId: null }),
      episode({ episodeId: 'b', parentEpisodeId: 'a' }),
      episode({ episodeId: 'c', parentEpisodeId: 'b' }),
      episode({ episodeId: 'x', parentEpisodeId: 'y' }),
      episode({ episodeId: 'y', parentEpisodeId: 'x' }),
      episode({ episodeId: 'orphan', parentEpisodeId: 'gone' }),
      episode({ episodeId: 'leak', parentEpisodeId: 'secret' }),
      episode({ episodeId: 'secret', projectId: 'repo-b', parentEpisodeId: null }),
    ].map((e) => [e.episodeId, e]),
  );
  const lookup = (id: string) => store.get(id);

  it('should return the chain root first, ending with the requested episode', () => {
    const chain = resolveEpisodeChain(SCOPE, 'c', lookup);
    expect(chain.episodes.map((e) => e.episodeId)).toEqual(['a', 'b', 'c']);
    expect(chain).toMatchObject({ cycleDetected: false, missingParentId: null, truncated: false });
  });

  it('should stop at a cycle and report it', () => {
    const chain = resolveEpisodeChain(SCOPE, 'x', lookup);
    expect(chain.episodes.map((e) => e.episodeId)).toEqual(['y', 'x']);
    expect(chain.cycleDetected).toBe(true);
  });

  it('should report a missing parent, and treat another project as missing', () => {
    expect(resolveEpisodeChain(SCOPE, 'orphan', lookup)).toMatchObject({ missingParentId: 'gone' });
    const leak = resolveEpisodeChain(SCOPE, 'leak', lookup);
    expect(leak.episodes.map((e) => e.episodeId)).toEqual(['leak']);
    expect(leak.missingParentId).toBe('secret');
    expect(resolveEpisodeChain(SCOPE, 'secret', lookup).episodes).toEqual([]);
  });

  it('should truncate at maxDepth', () => {
    expect(resolveEpisodeChain(SCOPE, 'c', lookup, 2)).toMatchObject({ truncated: true });
    expect(resolveEpisodeChain(SCOPE, 'c', lookup, 2).episodes.map((e) => e.episodeId)).toEqual([
      'b',
      'c',
    ]);
  });
});

describe('renderTopicReplay', () => {
  it('should render seed 003 replay text', () => {
    const episodes = [
      episode({
        episodeId: 'aaaaaaaa-1',
        startedAt: Date.UTC(2026, 2, 1),
        intent: 'Started debugging memory leak',
        tags: ['debugging'],
        outcome: 'partial',
      }),
      episode({
        episodeId: 'bbbbbbbb-2',
        startedAt: Date.UTC(2026, 2, 2),
        intent: null,
        intentKeywords: ['leak', 'fix'],
        parentEpisodeId: 'aaaaaaaa-1',
        summary: 'Found the root cause.',
      }),
    ];
    expect(renderTopicReplay('memory leak', episodes)).toBe(
      [
        "📜 Episode history for 'memory leak' (2 episodes):",
        '',
        '• [2026-03-01] Started debugging memory leak',
        '  Tags: debugging | Outcome: partial',
        '',
        '• [2026-03-02] leak, fix (continues from aaaaaaaa)',
        '  Found the root cause.',
      ].join('\n'),
    );
    expect(renderTopicReplay('nothing', [])).toBe('No episodes found for topic: nothing');
  });
});
