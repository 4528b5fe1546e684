import type { Episode, Memory } from '@engram/contracts';
import { expect, it } from 'vitest';
import { DAY, episode, memory, NOW } from '../../retrieval/testing/fixtures';
import {
  anyOfFilter,
  episodeFilters,
  memoryFilters,
  relatedFileFilter,
  workStateFilters,
} from '../recall-store.filters';
import type { StoreFilter } from '../recall-store.port';
import { prompt, type RecallStoreHarness } from './recall-store-contract.harness';

// The RecallStore contract, reads without a query: the episodes of turns, recent sessions,
// listings by filter (work states among them).

export function storeListingCases(h: RecallStoreHarness): void {
  const { index, scopeOf } = h;

  it('should name the episodes of turns, and the most recently active sessions', async () => {
    const scope = scopeOf('sessions');
    await index({
      episodes: [
        episode({
          ...scope,
          episodeId: 'e-1',
          sessionId: 's-1',
          startedAt: NOW - 3 * DAY,
          timestamp: NOW - 3 * DAY,
          sourceEventIds: ['p-1', 'p-2'],
        }),
        episode({
          ...scope,
          episodeId: 'e-2',
          sessionId: 's-3',
          startedAt: NOW - 2 * DAY,
          timestamp: NOW - 2 * DAY,
          sourceEventIds: ['p-2'],
        }),
      ],
      prompts: [
        prompt(scope, { eventId: 'p-1', sessionId: 's-1', timestamp: NOW - 3 * DAY }),
        prompt(scope, { eventId: 'p-4', sessionId: 's-2', timestamp: NOW - 3_600_000 }),
      ],
    });
    expect(await h.store.episodesOfTurns(scope, ['p-1', 'p-2', 'p-9'])).toEqual(
      new Map([
        ['p-1', ['e-1']],
        ['p-2', ['e-1', 'e-2']],
      ]),
    );
    expect(await h.store.recentSessions(scope, 2)).toEqual([
      { sessionId: 's-2', lastActivityAt: NOW - 3_600_000 },
      { sessionId: 's-3', lastActivityAt: NOW - 2 * DAY },
    ]);
  });

  it('should list by filter without a query, newest first, within the scope and size', async () => {
    const scope = scopeOf('list');
    const other = { ...scope, tenantId: 'globex' };
    const about = (memoryId: string, timestamp: number, extra: Partial<Memory> = {}) =>
      memory({ ...scope, memoryId, timestamp, relatedFiles: ['src/auth/refresh.ts'], ...extra });
    await index({
      memories: [
        about('list-old', NOW - 3 * DAY),
        about('list-new', NOW - DAY),
        about('list-mid', NOW - 2 * DAY, { memoryType: 'decision' }),
        about('list-stale', NOW, { staleAt: NOW - DAY }),
        about('list-elsewhere', NOW, { relatedFiles: ['src/db/pool.ts'] }),
        memory({ ...other, memoryId: 'list-globex', relatedFiles: ['src/auth/refresh.ts'] }),
      ],
      episodes: [
        episode({ ...scope, episodeId: 'list-e-1', sessionId: 's-1', timestamp: NOW - DAY }),
        episode({ ...scope, episodeId: 'list-e-2', sessionId: 's-2', timestamp: NOW }),
      ],
    });
    const listIds = async (filter: readonly StoreFilter[], size = 10) =>
      (await h.store.list<Memory>('memories', { scope, filter, size })).map((d) => d.id);
    const aboutFile = [
      ...memoryFilters({ types: ['gotcha'], stale: 'exclude' }, undefined),
      relatedFileFilter('/home/me/repo/src/auth/refresh.ts'),
    ];
    expect(await listIds(aboutFile)).toEqual(['list-new', 'list-old']);
    expect(await listIds(aboutFile, 1)).toEqual(['list-new']);
    const listed = await h.store.list<Memory>('memories', { scope, filter: aboutFile, size: 1 });
    expect(listed[0].source).toMatchObject({ memoryId: 'list-new', tenantId: 'acme' });
    const byId = await h.store.list<Episode>('episodes', {
      scope,
      filter: [...episodeFilters(undefined), anyOfFilter('episodeId', ['list-e-1'])],
      size: 10,
    });
    expect(byId.map((d) => d.source.episodeId)).toEqual(['list-e-1']);
    const ofOther = await h.store.list('memories', {
      scope: other,
      filter: [...memoryFilters({}, undefined), anyOfFilter('memoryId', ['list-new'])],
      size: 10,
    });
    expect(ofOther).toEqual([]);
  });

  it("should list a session's work states: its own, its thread's, its work unit's (issue #20)", async () => {
    const scope = scopeOf('work-state');
    const story = { methodology: 'bmad', hierarchy: ['epic_3', 'story_3_2'], label: 'S3.2' };
    const state = (memoryId: string, sessionId: string, extra: Partial<Memory> = {}) =>
      memory({ ...scope, memoryId, memoryType: 'work_state', sessionId, ...extra });
    await index({
      memories: [
        state('ws-own', 's-1'),
        state('ws-thread', 's-2', { episodeId: 'ws-e-shared' }),
        state('ws-unit', 's-3', { workUnitRef: story }),
        state('ws-linked', 's-4', { episodeId: 'ws-e-linked' }),
        state('ws-other', 's-5', { episodeId: 'ws-e-other' }),
        state('ws-other-unit', 's-6', { workUnitRef: { ...story, hierarchy: ['epic_3'] } }),
        state('ws-own-stale', 's-1', { staleAt: NOW }),
        memory({ ...scope, memoryId: 'ws-gotcha', sessionId: 's-1' }),
      ],
      episodes: [
        episode({ ...scope, episodeId: 'ws-e-shared', sessionId: 's-2', threadId: 'ws-t' }),
        episode({ ...scope, episodeId: 'ws-e-mine', sessionId: 's-1', threadId: 'ws-t' }),
        episode({ ...scope, episodeId: 'ws-e-other', sessionId: 's-5', threadId: 'ws-t2' }),
      ],
    });
    const inThread = await h.store.list<Episode>('episodes', {
      scope,
      filter: [...episodeFilters(undefined), anyOfFilter('threadId', ['ws-t'])],
      size: 10,
    });
    expect(inThread.map((d) => d.source.episodeId).sort()).toEqual(['ws-e-mine', 'ws-e-shared']);
    const listed = await h.store.list<Memory>('memories', {
      scope,
      filter: workStateFilters({
        sessionId: 's-1',
        threadId: 'ws-t',
        threadEpisodeIds: ['ws-e-mine', 'ws-e-shared'],
        linkedEpisodeIds: ['ws-e-linked'],
        workUnits: [story],
      }),
      size: 10,
    });
    expect(listed.map((d) => d.id).sort()).toEqual(['ws-linked', 'ws-own', 'ws-thread', 'ws-unit']);
  });
}
