// The distiller's two stages, unchanged, on the embedded SQLite log (SPEC §2, §8), downstream of
// the embedded segmenter: agent events in, distilled memories and summarised episodes out.
import { testDistillerSettings } from './testing/test-settings';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Episode, Memory, Typed } from '@engram/contracts';
import { segmenterSettings } from '@engram/core';
import { EmbeddedStreamPlatform, SqliteEventLog, SqliteEventLogAdapter } from '@engram/embedded';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startSegmenter as startSegmenterOn, type RunningSegmenter } from '@engram/app-segmenter';
import { startDistiller as startDistillerOn, type RunningDistiller } from './distiller.topology';
import { distillerCodecs } from './distiller-topics';
import { DEFAULT_DISTILLER_TOPICS } from './distiller.stage';
import { DISTILLER_AGENT_ID } from './episode-summary.stage';
import { debuggingSession, type RecordedSession } from './testing/distiller-events';
import { caughtUp, until } from './testing/embedded-waits';

const TOPICS = DEFAULT_DISTILLER_TOPICS;
const SCOPE = { tenantId: 'acme', projectId: 'acme/api' };
const T0 = Date.UTC(2026, 1, 16, 9, 0);
const PARTITIONS = [0, 1, 2];

type Input = 'prompts' | 'toolCalls' | 'lifecycle';

/**
 * Publishes the session's agent events as an agent (or `engram replay`) would: in time order,
 * each run of one topic in one publish. The boundaries are the embedded segmenter's to write.
 */
async function publish(port: SqliteEventLogAdapter, session: RecordedSession): Promise<number> {
  const codecs = distillerCodecs(TOPICS);
  const events: { input: Input; event: Typed; timestamp: number }[] = [
    ...session.prompts.map((event) => ({ input: 'prompts' as const, event })),
    ...session.toolCalls.map((event) => ({ input: 'toolCalls' as const, event })),
    ...session.lifecycle.map((event) => ({ input: 'lifecycle' as const, event })),
  ]
    .map((e) => ({ ...e, timestamp: e.event.timestamp }))
    .sort((a, b) => a.timestamp - b.timestamp);
  const runs: { input: Input; events: Typed[] }[] = [];
  for (const { input, event } of events) {
    const last = runs[runs.length - 1];
    if (last?.input === input) last.events.push(event);
    else runs.push({ input, events: [event] });
  }
  for (const run of runs) {
    // Each run holds one topic's events only (split by topic above).
    await port.publish(codecs[run.input], run.events);
  }
  return events.length;
}

const groupsOf = (segmenter: RunningSegmenter, distiller: RunningDistiller) => [
  { groupId: segmenter.groupId, topics: segmenter.inputs },
  { groupId: distiller.groupId, topics: [...distiller.inputs, ...distiller.internal] },
];

describe('distiller on the embedded log', () => {
  let dir: string;
  let log: SqliteEventLog;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'engram-distiller-'));
    log = SqliteEventLog.open({ dataDir: dir });
    // The extractive path needs no model and no network: any HTTP call fails the test.
    vi.stubGlobal('fetch', () => Promise.reject(new Error('no network in the extractive path')));
  });

  afterEach(() => {
    vi.unstubAllGlobals();
    log.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const retry = { initialMs: 5, maxMs: 50 };
  const startSegmenter = () =>
    startSegmenterOn({
      platform: new EmbeddedStreamPlatform(log),
      settings: segmenterSettings(),
      sweepIntervalMs: 20,
      retry,
    });
  // No `llm`: the extractive distiller, which needs no model and no network.
  const startDistiller = () =>
    startDistillerOn({
      platform: new EmbeddedStreamPlatform(log),
      sweepIntervalMs: 20,
      retry,
      settings: testDistillerSettings(),
    });

  const memories = (): Memory[] =>
    [...log.latestByKey(TOPICS.memories, PARTITIONS).values()].map(
      (value) => JSON.parse(value.toString('utf8')) as Memory,
    );
  const episodes = (): Episode[] =>
    [...log.latestByKey(TOPICS.episodes, PARTITIONS).values()].map(
      (value) => JSON.parse(value.toString('utf8')) as Episode,
    );

  it('should distil a recorded session behind the segmenter, summarise its episodes, once', async () => {
    const session = debuggingSession('s-embedded', T0, SCOPE);
    let segmenter = await startSegmenter();
    let distiller = await startDistiller();
    expect(distiller.distiller.method).toBe('extractive');

    const started = performance.now();
    await publish(new SqliteEventLogAdapter(log), session);
    await caughtUp(log, groupsOf(segmenter, distiller));
    const elapsedMs = performance.now() - started;
    await distiller.stop();
    await segmenter.stop();
    // Measured, never asserted (2 cores, shared): events → distilled memories and summaries.
    console.info(`embedded pipeline: events → memories in ${elapsedMs.toFixed(0)} ms`);

    // Distilled memories, with provenance to the session's real events.
    const distilled = memories().filter((m) => m.source === 'distilled');
    expect(distilled.length).toBeGreaterThan(0);
    for (const memory of distilled) {
      expect(memory.tenantId).toBe('acme');
      expect(memory.provenanceSessionIds).toEqual(['s-embedded']);
      expect(memory.sourceEventIds.length).toBeGreaterThan(0);
      for (const id of memory.sourceEventIds) expect(session.sourceEventIds).toContain(id);
      expect(session.eventTimes).toContain(memory.createdAt);
    }
    const text = distilled.map((m) => m.content).join('\n');
    // The user's correction, learnt as such.
    expect(distilled).toContainEqual(
      expect.objectContaining({
        memoryType: 'gotcha',
        tags: expect.arrayContaining(['kind:correction']) as string[],
        content: expect.stringMatching(/don't touch the cache TTL/) as string,
      }),
    );
    expect(text).toMatch(/axios-retry/);
    // Each episode close and the session end (seven user messages) were distilled; the merge
    // stage joined every window's version of a fact, so the memory names both triggers.
    const triggers = new Set(
      distilled.flatMap((m) => m.tags.filter((t) => t.startsWith('trigger:'))),
    );
    expect([...triggers].sort()).toEqual(['trigger:EpisodeClosed', 'trigger:SessionEnded']);
    expect(distiller.merge.counters.candidates).toBeGreaterThan(0);

    // Every episode the segmenter closed carries its narrative as summary.
    const closed = episodes();
    expect(closed.length).toBeGreaterThan(0);
    for (const episode of closed) {
      expect(episode.sessionId).toBe('s-embedded');
      expect(episode.summary).toEqual(expect.any(String));
      expect(episode.summary!.length).toBeGreaterThan(0);
      expect(episode.agentId).toBe(DISTILLER_AGENT_ID);
    }
    // Each summarised once (what was committed, not what a transform did).
    const summarised = [...log.replay(TOPICS.episodes)]
      .map((record) => JSON.parse(String(record.value)) as Episode)
      .filter((episode) => episode.summary !== null);
    expect(summarised.map((episode) => episode.episodeId).sort()).toEqual(
      closed.map((episode) => episode.episodeId).sort(),
    );

    // A restart reprocesses nothing: offsets, state and outputs were committed together.
    const memoryEnds = log.endOffsets(TOPICS.memories);
    const episodeEnds = log.endOffsets(TOPICS.episodes);
    const before = memories().length;
    segmenter = await startSegmenter();
    distiller = await startDistiller();
    // Wait for two sweeps of each timer (committed transactions), not for a time.
    await until(() => distiller.processor.counters.transactions >= 4);
    await caughtUp(log, groupsOf(segmenter, distiller));
    await distiller.stop();
    await segmenter.stop();
    expect(distiller.stage.counters.events).toBe(0);
    expect(distiller.stage.counters.distilled).toBe(0);
    expect(distiller.stage.counters.memories).toBe(0);
    expect(distiller.merge.counters.candidates).toBe(0);
    expect(log.endOffsets(TOPICS.memories)).toEqual(memoryEnds);
    expect(log.endOffsets(TOPICS.episodes)).toEqual(episodeEnds);
    expect(memories()).toHaveLength(before);
  });

  it('should join a fact learnt in two sessions into one memory naming both', async () => {
    const segmenter = await startSegmenter();
    const distiller = await startDistiller();
    const port = new SqliteEventLogAdapter(log);
    // The later session first: the result must not depend on which the distiller finishes last.
    await publish(port, debuggingSession('s-later', T0 + 86_400_000, SCOPE));
    await publish(port, debuggingSession('s-earlier', T0, SCOPE));
    await caughtUp(log, groupsOf(segmenter, distiller));
    await distiller.stop();
    await segmenter.stop();

    const distilled = memories().filter((m) => m.source === 'distilled');
    const facts = distilled.filter((m) => m.memoryType !== 'work_state');
    expect(facts.length).toBeGreaterThan(0);
    for (const memory of facts) {
      expect(memory.provenanceSessionIds).toEqual(['s-earlier', 's-later']);
      // Learnt first in the earlier session: its content, session and time.
      expect(memory.sessionId).toBe('s-earlier');
      expect(memory.createdAt).toBeLessThan(T0 + 86_400_000);
    }
    // One work_state per session (a natural key of its own, never joined).
    const workStates = distilled.filter((m) => m.memoryType === 'work_state');
    expect(workStates.map((m) => m.sessionId).sort()).toEqual(['s-earlier', 's-later']);
  });
});
