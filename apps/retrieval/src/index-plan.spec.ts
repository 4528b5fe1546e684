import { DEFAULT_SEGMENTER_SETTINGS, InvalidEventError, promptContentProblem } from '@engram/core';
import { describe, expect, it } from 'vitest';
import {
  lastWins,
  planAccessCleanup,
  planEpisodes,
  planMemories,
  planTurns,
  type PlannedOperation,
} from './index-plan';
import { delivered, episodeRecord, memoryRecord, promptRecord, tombstone } from './testing/records';

describe('planMemories', () => {
  it('should upsert a memory under its id and delete on a tombstone by key', () => {
    const plan = planMemories(
      [
        delivered(memoryRecord({ memoryId: 'm1', content: 'token refresh races logout' })),
        tombstone('m2'),
      ],
      'memories',
    );
    expect(plan.skipped).toBe(0);
    expect(plan.operations).toMatchObject([
      { action: 'index', index: 'memories', id: 'm1', text: 'token refresh races logout' },
      { action: 'delete', index: 'memories', id: 'm2' },
    ]);
  });

  it('should refuse a tombstone whose key cannot be a document id', () => {
    expect(() => planMemories([tombstone('m'.repeat(513))], 'memories')).toThrow(InvalidEventError);
  });
});

describe('planAccessCleanup', () => {
  it('should delete the access counters of each tombstoned memory once, and of nothing else', () => {
    const operations = planAccessCleanup(
      [
        tombstone('m1'),
        delivered(memoryRecord({ memoryId: 'm2', content: 'kept' })),
        tombstone('m1'),
        tombstone('m3'),
      ],
      'memory-access',
    );
    expect(operations).toEqual([
      { action: 'delete', index: 'memory-access', id: 'm1' },
      { action: 'delete', index: 'memory-access', id: 'm3' },
    ]);
  });
});

describe('planEpisodes', () => {
  it('should upsert an episode under its id, and delete on a tombstone', () => {
    const plan = planEpisodes(
      [delivered(episodeRecord({ episodeId: 'e1', intent: 'fix login' })), tombstone('e0')],
      'episodes',
    );
    expect(plan.operations).toMatchObject([
      { action: 'index', id: 'e1', text: expect.stringContaining('fix login') as string },
      { action: 'delete', id: 'e0' },
    ]);
  });
});

describe('planTurns', () => {
  it('should index user prompts under their eventId and skip agent and system prompts', () => {
    const plan = planTurns(
      [
        delivered(promptRecord({ eventId: 'p1', text: 'why does refresh fail' })),
        delivered(promptRecord({ eventId: 'p2', source: 'agent' })),
        delivered(promptRecord({ eventId: 'p3', source: 'system' })),
      ],
      'turns',
    );
    expect(plan.skipped).toBe(2);
    expect(plan.operations).toMatchObject([
      { action: 'index', id: 'p1', text: 'why does refresh fail' },
    ]);
  });
});

describe('planTurns, what the segmenter rejected', () => {
  it('should not index a prompt the segmenter dead-letters (a 10 MB turn)', () => {
    // Issue 19 finding 5: the segmenter dead-lettered the oversize turn, the indexer indexed it,
    // and it was recallable.
    const huge = 'x'.repeat(10 * 1024 * 1024);
    const plan = planTurns(
      [
        delivered(promptRecord({ eventId: 'big', text: huge })),
        delivered(promptRecord({ eventId: 'bad-id', promptId: -1 })),
        delivered(promptRecord({ eventId: 'ok', text: 'why does refresh fail' })),
      ],
      'turns',
    );
    expect(plan.operations.map((op) => op.id)).toEqual(['ok']);
    expect(plan.skipped).toBe(2);
    // The same rule as the segmenter's, not a copy of it.
    expect(promptContentProblem({ promptId: 1, text: huge }, DEFAULT_SEGMENTER_SETTINGS)).toMatch(
      /over the limit/,
    );
  });
});

describe('lastWins', () => {
  const op = (id: string, text: string, index = 'i'): PlannedOperation => ({
    action: 'index',
    index,
    id,
    text,
    body: { text } as never,
  });

  it('should keep only the last operation per document, in the order of the last ones', () => {
    const kept = lastWins([
      op('a', 'a1'),
      op('b', 'b1'),
      { action: 'delete', index: 'i', id: 'a' },
      op('c', 'c1'),
      op('b', 'b2'),
      op('a', 'other index', 'j'),
    ]);
    expect(
      kept.map((k) => `${k.index}/${k.id}/${k.action === 'index' ? k.text : 'delete'}`),
    ).toEqual(['i/a/delete', 'i/c/c1', 'i/b/b2', 'j/a/other index']);
  });
});
