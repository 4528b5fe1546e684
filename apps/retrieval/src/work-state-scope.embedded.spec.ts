import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Episode, Memory, PromptSubmitted, WorkUnitRef } from '@engram/contracts';
import { DEFAULT_RANKING_CONFIG, distillationToMemories, type Distillation } from '@engram/core';
import { SqliteRetrievalStore, sqliteStoreWriter } from '@engram/embedded';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecallStack } from './recall-stack';
import { RetrievalIndexer } from './retrieval-indexer';
import { createRecallStack } from './retrieval-backend';
import { sqliteBackend } from './sqlite-backend';
import { LEXICAL_ONLY_EMBEDDER } from './retrieval-embedders';
import { delivered, episodeRecord, PROJECT, promptRecord, TENANT } from './testing/records';

// Issue #20: BuildContext's work state is the asking session's work, not the project's latest.
// Embedded mode end to end: the distiller's own work_state records, indexed into the SQLite
// retrieval store by the real indexer, read back through the embedded recall stack.

const HOUR = 3_600_000;
const NOW = Date.now();
const STORY: WorkUnitRef = {
  methodology: 'bmad',
  hierarchy: ['epic_3', 'story_3_2'],
  label: 'S3.2',
};

/** One session: a prompt, the episode of its thread, and (optionally) a distilled work state. */
function session(
  sessionId: string,
  at: number,
  options: {
    task?: string;
    workUnitRef?: WorkUnitRef | null;
    crossThreadEpisodeIds?: string[];
  } = {},
): { prompt: PromptSubmitted; episode: Episode; memories: Memory[] } {
  const prompt = promptRecord({
    eventId: `p-${sessionId}`,
    sessionId,
    channelKind: 'implicit',
    text: `carry on with the work of ${sessionId}`,
    timestamp: at,
  });
  const episode = episodeRecord({
    episodeId: `ep-${sessionId}`,
    sessionId,
    threadId: `thread-${sessionId}`,
    startedAt: at,
    endedAt: null,
    timestamp: at,
    sourceEventIds: [prompt.eventId],
    crossThreadEpisodeIds: options.crossThreadEpisodeIds ?? [],
    workUnitRef: options.workUnitRef ?? null,
  });
  const distillation: Distillation = {
    dedupeKey: `dedupe-${sessionId}`,
    tenantId: TENANT,
    projectId: PROJECT,
    sessionId,
    episodeId: episode.episodeId,
    trigger: 'EpisodeClosed',
    triggerAt: at + 60_000,
    method: 'extractive',
    firstEntryAt: at,
    lastEntryAt: at + 60_000,
    date: null,
    segments: [],
    currentTask: options.task ?? null,
    suggestedResponse: null,
    sourceEventIds: [prompt.eventId],
  };
  const memories = distillationToMemories(distillation, {
    workUnitRef: options.workUnitRef ?? null,
  });
  return { prompt, episode, memories };
}

describe('work state scoping, embedded (issue #20)', () => {
  let dir: string;
  let store: SqliteRetrievalStore;
  let stack: RecallStack;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'engram-work-state-'));
    store = SqliteRetrievalStore.open({ dataDir: dir });
    const sessions = [
      session('sess-a', NOW - 3 * HOUR, { task: 'Alpha: wiring the cache, step 2 of 4' }),
      // newer, and on a unit of work
      session('sess-b', NOW - HOUR, {
        task: 'Bravo: renaming the billing tables, step 1 of 3',
        workUnitRef: STORY,
      }),
      // a new session that has written no work state yet
      session('sess-c', NOW - 30 * 60_000),
      // its thread links to session A's episode (cross-thread link)
      session('sess-d', NOW - 20 * 60_000, { crossThreadEpisodeIds: ['ep-sess-a'] }),
      // works on the same story as session B
      session('sess-e', NOW - 10 * 60_000, { workUnitRef: STORY }),
    ];
    const indexer = new RetrievalIndexer(LEXICAL_ONLY_EMBEDDER, sqliteStoreWriter(store));
    await indexer.handlePrompts(
      sessions.map((s) => delivered(s.prompt, { key: s.prompt.sessionId })),
    );
    await indexer.handleEpisodes(
      sessions.map((s) => delivered(s.episode, { key: s.episode.episodeId })),
    );
    await indexer.handleMemories(
      sessions.flatMap((s) => s.memories).map((m) => delivered(m, { key: m.memoryId })),
    );
    stack = createRecallStack({
      backend: sqliteBackend(store),
      embedder: LEXICAL_ONLY_EMBEDDER,
      ranking: DEFAULT_RANKING_CONFIG,
    });
  });

  afterAll(async () => {
    await stack?.access.close();
    store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const workStates = async (sessionId: string) => {
    const context = await stack.context.buildContext({
      tenantId: TENANT,
      projectId: PROJECT,
      sessionId,
    });
    return context.items.filter((i) => i.kind === 'work_state').map((i) => i.text);
  };

  it("should show each of two sessions its own work state, never the other's", async () => {
    expect(await workStates('sess-a')).toEqual([
      'Work state: Alpha: wiring the cache, step 2 of 4',
    ]);
    expect(await workStates('sess-b')).toEqual([
      'Work state (S3.2): Bravo: renaming the billing tables, step 1 of 3',
    ]);
  });

  it('should show a session with no work state of its own none of the project', async () => {
    expect(await workStates('sess-c')).toEqual([]);
    expect(await workStates('sess-unknown')).toEqual([]);
  });

  it('should show the work state of a linked thread or of the same unit of work', async () => {
    expect(await workStates('sess-d')).toEqual([
      'Work state: Alpha: wiring the cache, step 2 of 4',
    ]);
    expect(await workStates('sess-e')).toEqual([
      'Work state (S3.2): Bravo: renaming the billing tables, step 1 of 3',
    ]);
  });

  it('should rank work states by their 7-day half-life and give the same list untracked', async () => {
    const recall = () =>
      stack.service.recall({
        tenantId: TENANT,
        projectId: PROJECT,
        query: 'work state step',
        tier: 'memories',
        track: false,
      });
    const first = await recall();
    const scores = first.results.flatMap((hit) => (hit.tier === 'memories' ? [hit.memory] : []));
    expect(scores.length).toBeGreaterThan(0);
    for (const ranked of scores) expect(ranked.score.halfLifeDays).toBe(7);
    // the clock moves between the two (recency drifts in the last digits): compare the lists
    const ids = (answer: typeof first) =>
      answer.results.map((hit) =>
        hit.tier === 'memories' ? hit.memory.memory.memoryId : hit.tier,
      );
    expect(ids(await recall())).toEqual(ids(first));
  });
});
