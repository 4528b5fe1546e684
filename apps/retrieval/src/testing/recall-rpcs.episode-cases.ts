import { expect, it } from 'vitest';
import { call } from './recall-rpc-client';
import { SCOPE, type EpisodeMessage, type RecallRpcsContext } from './recall-rpcs.context';

// The recall rpcs suite, episode history: a topic's episodes in order, and chains of episodes.
// Test support only.

/** GetEpisodeSequence, ReplayTopic and GetEpisodeChain. */
export function episodeHistoryCases(t: RecallRpcsContext): void {
  it('GetEpisodeSequence and ReplayTopic: the topic in chronological order, scored', async () => {
    const { response } = await call<{ episodes: EpisodeMessage[] }>(
      t.client,
      'GetEpisodeSequence',
      { scope: SCOPE, topic: 'auth token refresh logout race', min_relevance: 0.3 },
    );
    const ids = response!.episodes.map((e) => e.episode.episode_id);
    expect(ids.filter((id) => ['e-1', 'e-2', 'e-3'].includes(id))).toEqual(['e-1', 'e-2', 'e-3']);
    expect(ids).not.toContain('e-css');
    expect(ids).not.toContain('globex-episode');
    const starts = response!.episodes.map((e) => e.episode.started_at_ms);
    expect(starts).toEqual([...starts].sort((a, b) => a - b));
    expect(response!.episodes.every((e) => e.scores!.relevance > 0.3)).toBe(true);
    const replay = await call<{ episodes: EpisodeMessage[]; rendered: string }>(
      t.client,
      'ReplayTopic',
      { scope: SCOPE, topic: 'auth token refresh logout race', limit: 2 },
    );
    expect(replay.response!.episodes.length).toBeLessThanOrEqual(2);
    expect(replay.response!.rendered).toMatch(
      /^📜 Episode history for 'auth token refresh logout race'/,
    );
    const none = await call<{ rendered: string }>(t.client, 'ReplayTopic', {
      scope: SCOPE,
      topic: 'zanzibar quarterly roadmap',
    });
    expect(none.response!.rendered).toBe('No episodes found for topic: zanzibar quarterly roadmap');
  });

  it('GetEpisodeChain: root first, cycles detected, other tenants invisible', async () => {
    const { response } = await call<{ episodes: EpisodeMessage[]; cycle_detected: boolean }>(
      t.client,
      'GetEpisodeChain',
      { scope: SCOPE, episode_id: 'e-3' },
    );
    expect(response!.episodes.map((e) => e.episode.episode_id)).toEqual(['e-1', 'e-2', 'e-3']);
    expect(response!.cycle_detected).toBe(false);
    expect(response!.episodes[2].provenance.episode_ids).toEqual(['e-3']);
    const cycle = await call<{ episodes: EpisodeMessage[]; cycle_detected: boolean }>(
      t.client,
      'GetEpisodeChain',
      { scope: SCOPE, episode_id: 'cycle-a' },
    );
    expect(cycle.response!.cycle_detected).toBe(true);
    const foreign = await call<{ episodes: unknown[] }>(
      t.client,
      'GetEpisodeChain',
      { scope: SCOPE, episode_id: 'e-3' },
      'token-globex',
    );
    expect(foreign.response!.episodes).toEqual([]);
  });
}
