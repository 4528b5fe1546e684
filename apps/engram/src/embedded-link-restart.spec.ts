// Issue #20, "Persistent link state": the chaining index and the recent-thread index live in the
// segmenter's changelog (the SQLite log's compacted state here), so a restart of the embedded
// services between two episodes of one topic links them exactly as an uninterrupted run does.
import type { Typed } from '@engram/contracts';
import { parseConfig } from '@engram/config';
import { partitionOfKey } from '@engram/core';
import { SqliteEventLogAdapter } from '@engram/embedded';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LEXICAL_ONLY_EMBEDDER } from '@engram/app-retrieval';
import { prefixedTopics, segmenterCodecs } from '@engram/app-segmenter';
import { startEmbeddedServices, type EmbeddedServices } from './embedded-services';

const HOUR = 60 * 60 * 1000;
const T0 = Date.UTC(2026, 2, 3, 9, 0, 0);
const TOPIC = 'debug the memory leak in the session cache eviction timer';
const topics = prefixedTopics('');
const codecs = segmenterCodecs(topics);
// Two sessions on different input partitions: B's partition holds nothing of A's.
const SESSION_A = 'link-restart-a';
const SESSION_B = 'link-restart-c';

function envelope(sessionId: string, kind: string, at: number) {
  return {
    eventId: `${sessionId}-${kind}`,
    tenantId: 'acme',
    projectId: 'acme/repo',
    sessionId,
    agentId: 'claude-code',
    userId: 'dev-1',
    timestamp: at,
    schemaVersion: 1,
  };
}

function prompt(sessionId: string, at: number): Typed<'PromptSubmitted'> {
  return {
    type: 'PromptSubmitted',
    ...envelope(sessionId, 'prompt-1', at),
    promptId: 1,
    source: 'user',
    channel: 'cli',
    channelKind: 'explicit',
    explicitThreadId: sessionId,
    text: TOPIC,
    methodology: null,
    methodologyPhase: null,
    workUnitRef: null,
    parentEpisodeId: null,
  };
}

function ended(sessionId: string, at: number): Typed<'SessionEnded'> {
  return {
    type: 'SessionEnded',
    ...envelope(sessionId, 'end', at),
    userMessageCount: 1,
    durationS: 60,
    reason: 'exit',
  };
}

interface Boundary {
  type: string;
  sessionId: string;
  episodeId: string;
  parentEpisodeId: string | null;
}

describe('link state across a restart of the embedded services (issue #20)', () => {
  const dirs: string[] = [];
  let running: EmbeddedServices | null = null;

  afterEach(async () => {
    await running?.stop();
    running = null;
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  async function start(dataDir: string): Promise<EmbeddedServices> {
    running = await startEmbeddedServices({
      config: parseConfig({}),
      dataDir,
      sweepIntervalMs: 20,
      llm: null,
      retrievalEmbedder: LEXICAL_ONLY_EMBEDDER,
    });
    return running;
  }

  async function stop(): Promise<void> {
    await running?.stop();
    running = null;
  }

  /** Publishes the session's prompt and end; waits until its episode is closed and annotated. */
  async function runSession(services: EmbeddedServices, sessionId: string, at: number) {
    const adapter = new SqliteEventLogAdapter(services.log);
    await adapter.publish(codecs.prompts, [prompt(sessionId, at)]);
    await adapter.publish(codecs.lifecycle, [ended(sessionId, at + 60_000)]);
    const deadline = Date.now() + 20_000;
    while (!episodesOf(services).some((e) => e.sessionId === sessionId)) {
      if (Date.now() > deadline) throw new Error(`no episode for ${sessionId}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  function episodesOf(services: EmbeddedServices) {
    return [...services.log.replay(topics.episodes)].map(
      (r) => JSON.parse(String(r.value)) as { sessionId: string; episodeId: string },
    );
  }

  /** What the run decided: the boundaries and the thread-link decisions, as published. */
  function decisions(services: EmbeddedServices) {
    const boundaries = [...services.log.replay(topics.boundaries)].map(
      (r) => JSON.parse(String(r.value)) as Boundary,
    );
    const links = [...services.log.replay(topics.threadLinks)].map((r) => String(r.value));
    return { boundaries, links };
  }

  function freshDir(): string {
    const dir = mkdtempSync(join(tmpdir(), 'engram-link-restart-'));
    dirs.push(dir);
    return join(dir, 'data');
  }

  it('should parent the episode 7 h later to the one before the restart, as without one', async () => {
    const partitions = parseConfig({}).inputs.partitions;
    expect(partitionOfKey(SESSION_A, partitions)).not.toBe(partitionOfKey(SESSION_B, partitions));

    // Uninterrupted.
    const once = await start(freshDir());
    await runSession(once, SESSION_A, T0);
    await runSession(once, SESSION_B, T0 + 7 * HOUR);
    const expected = decisions(once);
    await stop();

    // Stopped after A's episode and started again on the same data dir.
    const dataDir = freshDir();
    const first = await start(dataDir);
    await runSession(first, SESSION_A, T0);
    await stop();
    const second = await start(dataDir);
    await runSession(second, SESSION_B, T0 + 7 * HOUR);
    const actual = decisions(second);

    const episodeA = actual.boundaries.find(
      (b) => b.sessionId === SESSION_A && b.type === 'EpisodeOpened',
    )!.episodeId;
    const openedB = actual.boundaries.find(
      (b) => b.sessionId === SESSION_B && b.type === 'EpisodeOpened',
    );
    expect(openedB?.parentEpisodeId).toBe(episodeA);
    expect(actual.boundaries).toEqual(expected.boundaries);
    // The recent-thread index survived too: B's new thread was decided against A's.
    expect(actual.links).toHaveLength(1);
    expect(actual.links).toEqual(expected.links);
  }, 60_000);
});
