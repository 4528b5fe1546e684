import type { Typed } from '@engram/contracts';
import type { AnyStageOutput, Delivered } from '@engram/core';
import { describe, expect, it } from 'vitest';
import { distillerCodecs } from './distiller-topics';
import { DEFAULT_DISTILLER_TOPICS } from './distiller.stage';
import { EpisodeSummaryStage, type EpisodeNarrative } from './episode-summary.stage';

const TOPICS = DEFAULT_DISTILLER_TOPICS;
const CODECS = distillerCodecs(TOPICS);

function episode(summary: string | null = null): Typed<'Episode'> {
  return {
    type: 'Episode',
    eventId: 'ev-episode',
    tenantId: 'acme',
    projectId: 'acme/api',
    sessionId: 's1',
    agentId: 'engram-segmenter',
    userId: null,
    timestamp: 1_000,
    schemaVersion: 1,
    episodeId: 'e1',
    threadId: 't1',
    firstPromptId: 1,
    lastPromptId: 3,
    startedAt: 500,
    endedAt: 1_000,
    closeReason: 'intent_shift',
    intentKeywords: ['refresh'],
    intent: 'fix the refresh test',
    obsCount: 4,
    investigate: 2,
    execute: 2,
    failures: 1,
    hotFiles: [],
    durationMs: 500,
    toolsUsed: [],
    participants: [],
    entities: [],
    outcome: 'success',
    tags: [],
    keyDecisions: [],
    parentEpisodeId: null,
    crossThreadEpisodeIds: [],
    summary,
    workUnitRef: null,
    sourceEventIds: [],
  };
}

const NARRATIVE: EpisodeNarrative = {
  eventId: 'ev-narrative',
  tenantId: 'acme',
  projectId: 'acme/api',
  sessionId: 's1',
  episodeId: 'e1',
  summary: 'Fixed the refresh test: the clock skew, not the cache.',
  timestamp: 900,
};

function delivered<E>(event: E, offset = 0): Delivered<E>[] {
  return [
    { event, topic: 't', partition: 0, offset: String(offset), key: null, headers: undefined },
  ];
}

function annotatedOf(outputs: AnyStageOutput[]): Typed<'Episode'>[] {
  const output = outputs.find((o) => 'codec' in o && o.codec.topic === TOPICS.episodes);
  return (output as { events: Typed<'Episode'>[] }).events;
}

describe('EpisodeSummaryStage', () => {
  function stage(changelog = new Map<string, Buffer>(), now = () => 0) {
    return new EpisodeSummaryStage(TOPICS, {
      restore: () => Promise.resolve(changelog),
      episodes: CODECS.episodes,
      clock: now,
    });
  }

  it('should annotate the episode with its narrative, whichever comes first', async () => {
    for (const order of ['episode-first', 'narrative-first']) {
      const s = stage();
      const first =
        order === 'episode-first'
          ? await s.episodeStage.transform(delivered(episode()))
          : await s.narrativeStage.transform(delivered(NARRATIVE));
      expect(annotatedOf(first)).toEqual([]);
      s.committed();
      const second =
        order === 'episode-first'
          ? await s.narrativeStage.transform(delivered(NARRATIVE))
          : await s.episodeStage.transform(delivered(episode()));
      const [annotated] = annotatedOf(second);
      expect(annotated).toMatchObject({
        episodeId: 'e1',
        summary: NARRATIVE.summary,
        agentId: 'engram-distiller',
        intent: 'fix the refresh test',
      });
      expect(annotated.eventId).not.toBe('ev-episode');
    }
  });

  it('should annotate a later version of the episode again (the segmenter republished it)', async () => {
    const s = stage();
    await s.episodeStage.transform(delivered(episode()));
    s.committed();
    await s.narrativeStage.transform(delivered(NARRATIVE));
    s.committed();
    // The stage's own output comes back, then the segmenter writes the episode again.
    expect(annotatedOf(await s.episodeStage.transform(delivered(episode('x'), 1)))).toEqual([]);
    s.committed();
    const later = { ...episode(), eventId: 'ev-episode-2', crossThreadEpisodeIds: ['e0'] };
    const [annotated] = annotatedOf(await s.episodeStage.transform(delivered(later, 2)));
    expect(annotated).toMatchObject({ summary: NARRATIVE.summary, crossThreadEpisodeIds: ['e0'] });
  });

  it('should leave an episode that has its summary alone (its own output coming back)', async () => {
    const s = stage();
    expect(annotatedOf(await s.episodeStage.transform(delivered(episode('done'))))).toEqual([]);
  });

  it('should keep a waiting half in the changelog across a restart, and expire it', async () => {
    const changelog = new Map<string, Buffer>();
    const keep = (outputs: AnyStageOutput[]) => {
      for (const output of outputs) {
        if (!('messages' in output)) continue;
        for (const m of output.messages) {
          if (m.value === null) changelog.delete(String(m.key));
          else changelog.set(String(m.key), m.value as Buffer);
        }
      }
    };
    keep(await stage(changelog).narrativeStage.transform(delivered(NARRATIVE)));
    // Restarted: the narrative comes back from the changelog and meets its episode.
    const [annotated] = annotatedOf(
      await stage(changelog).episodeStage.transform(delivered(episode())),
    );
    expect(annotated.summary).toBe(NARRATIVE.summary);
    // Never joined: after a day the half goes.
    let now = 0;
    const waiting = stage(changelog, () => now);
    keep(await waiting.episodeStage.transform(delivered({ ...episode(), episodeId: 'e2' }, 1)));
    waiting.committed();
    // (e1's join above was not committed: its narrative still waits too.)
    expect([...changelog.keys()].sort()).toEqual(['e1', 'e2']);
    expect(waiting.sweep().some((o) => 'messages' in o && o.messages.length > 0)).toBe(false);
    now = 86_400_000;
    keep(waiting.sweep());
    waiting.committed();
    expect([...changelog.keys()]).toEqual([]);
    expect(waiting.counters.expired).toBe(2);
  });
});
