import type { Memory, WorkUnitRef } from '@engram/contracts';
import { describe, expect, it } from 'vitest';
import { DAY, episode, memory, NOW } from './testing/fixtures';
import { latestWorkState, sameWorkUnit, workStateAnchor, workStateLink } from './work-state-scope';

const STORY: WorkUnitRef = { methodology: 'bmad', hierarchy: ['epic_3', 'story_3_2'], label: 'S' };
const OTHER_STORY: WorkUnitRef = { ...STORY, hierarchy: ['epic_3', 'story_3_3'] };

const ws = (memoryId: string, sessionId: string, overrides: Partial<Memory> = {}) =>
  memory({
    memoryId,
    memoryType: 'work_state',
    sessionId,
    provenanceSessionIds: [sessionId],
    timestamp: NOW - DAY,
    ...overrides,
  });

describe('work state scoping (issue #20)', () => {
  // Session A works in thread-a (episode ep-a1, on STORY); B in thread-b; C's thread links to ep-a1.
  const episodes = [
    episode({ episodeId: 'ep-a1', sessionId: 'A', threadId: 'thread-a', workUnitRef: STORY }),
    episode({ episodeId: 'ep-a0', sessionId: 'A', threadId: 'thread-a-old' }),
  ];
  const anchorA = workStateAnchor('A', { threadId: 'thread-a', linkedEpisodeIds: [] }, episodes);

  it("should anchor a session in its current thread's episodes, links and work units", () => {
    const shared = episode({
      episodeId: 'ep-x1',
      sessionId: 'X',
      threadId: 'thread-a', // an explicit thread continued in another session
      crossThreadEpisodeIds: ['ep-z'],
      workUnitRef: { methodology: 'native', hierarchy: [], label: 'none' },
    });
    expect(
      workStateAnchor('A', { threadId: 'thread-a', linkedEpisodeIds: ['ep-y', 'ep-a1'] }, [
        ...episodes,
        shared,
        episodes[0],
      ]),
    ).toEqual({
      sessionId: 'A',
      threadId: 'thread-a',
      threadEpisodeIds: ['ep-a1', 'ep-x1'],
      linkedEpisodeIds: ['ep-y', 'ep-z'], // its own episodes are not "linked"
      workUnits: [STORY], // a unit without a hierarchy names none
    });
  });

  it('should link a work state to its own session, its thread, its work unit or a linked thread, and nothing else', () => {
    expect(workStateLink(ws('w1', 'A'), anchorA)).toBe('own');
    expect(workStateLink(ws('w2', 'X', { episodeId: 'ep-a1' }), anchorA)).toBe('own');
    expect(
      workStateLink(ws('w3', 'B', { workUnitRef: { ...STORY, label: 'renamed' } }), anchorA),
    ).toBe('work_unit');
    expect(workStateLink(ws('w4', 'B', { workUnitRef: OTHER_STORY }), anchorA)).toBeNull();
    expect(workStateLink(ws('w5', 'B', { episodeId: 'ep-b1' }), anchorA)).toBeNull();
    const anchorC = workStateAnchor('C', { threadId: 'thread-c', linkedEpisodeIds: ['ep-a1'] }, []);
    expect(workStateLink(ws('w6', 'A', { episodeId: 'ep-a1' }), anchorC)).toBe('linked_thread');
    expect(workStateLink(ws('w7', 'A', { episodeId: 'ep-a0' }), anchorC)).toBeNull();
  });

  it("should show the session's own work state, never a newer one of another session", () => {
    const own = ws('own', 'A', { timestamp: NOW - 3 * DAY });
    const others = ws('others', 'B', { timestamp: NOW });
    expect(latestWorkState([others, own], anchorA)?.memoryId).toBe('own');
    expect(latestWorkState([others], anchorA)).toBeUndefined();
    const anchorB = workStateAnchor('B', { threadId: 'thread-b', linkedEpisodeIds: [] }, []);
    expect(latestWorkState([own, others], anchorB)?.memoryId).toBe('others');
  });

  it('should prefer the own work state, then the work unit, then a linked thread, newest within', () => {
    const anchor = workStateAnchor('C', { threadId: 'thread-c', linkedEpisodeIds: ['ep-a1'] }, [
      episode({ episodeId: 'ep-c1', sessionId: 'C', threadId: 'thread-c', workUnitRef: STORY }),
    ]);
    const linked = ws('linked', 'A', { episodeId: 'ep-a1', timestamp: NOW });
    const unit = ws('unit', 'B', { workUnitRef: STORY, timestamp: NOW - DAY });
    const unitOlder = ws('unit-older', 'D', { workUnitRef: STORY, timestamp: NOW - 2 * DAY });
    const own = ws('own', 'C', { timestamp: NOW - 5 * DAY });
    const stale = ws('own-stale', 'C', { timestamp: NOW, staleAt: NOW });
    expect(latestWorkState([linked, unit, unitOlder, own, stale], anchor)?.memoryId).toBe('own');
    expect(latestWorkState([linked, unitOlder, unit], anchor)?.memoryId).toBe('unit');
    expect(latestWorkState([linked], anchor)?.memoryId).toBe('linked');
  });

  it('should compare units of work by methodology and hierarchy, not by label', () => {
    expect(sameWorkUnit(STORY, { ...STORY, label: 'other label' })).toBe(true);
    expect(sameWorkUnit(STORY, OTHER_STORY)).toBe(false);
    expect(sameWorkUnit(STORY, { ...STORY, methodology: 'tdd' })).toBe(false);
    expect(sameWorkUnit(STORY, { ...STORY, hierarchy: ['epic_3'] })).toBe(false);
    const empty = { methodology: 'native', hierarchy: [], label: '' };
    expect(sameWorkUnit(empty, empty)).toBe(false);
  });
});
