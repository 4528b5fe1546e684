import { describe, expect, it } from 'vitest';
import { emptyProjectStats } from '../project-stats';
import type { FileAccessSignal } from '../signals';
import {
  addRecentSignal,
  emptyRecentEvidence,
  foldRecentUpTo,
  statsTimeline,
} from './recent-evidence';

function access(filePath: string, sessionId: string, at: number): FileAccessSignal {
  return {
    type: 'file_access',
    signalId: `${sessionId}:${filePath}`,
    sessionId,
    at,
    stepIndex: 0,
    promptId: 1,
    eventIds: [],
    filePath,
    module: 'src',
    toolName: 'Read',
    access: 'read',
    firstInSession: true,
  };
}

const sessionsOf = (stats: ReturnType<typeof emptyProjectStats>, file: string) =>
  stats.coAccess.files[file]?.sessionCount ?? 0;

describe('recent evidence: statistics as of a time (issue #19)', () => {
  it('should read, at each time, the evidence up to it whatever order it arrived in', () => {
    const base = emptyProjectStats();
    const recent = emptyRecentEvidence();
    for (const at of [30, 10, 20]) addRecentSignal(base, recent, 0, access('a.ts', `s${at}`, at));
    const timeline = statsTimeline(base, recent, 500);
    expect(sessionsOf(timeline.at(15), 'a.ts')).toBe(1);
    expect(sessionsOf(timeline.at(20), 'a.ts')).toBe(2);
    expect(sessionsOf(timeline.at(99), 'a.ts')).toBe(3);
    expect(sessionsOf(base, 'a.ts')).toBe(0); // the base is never changed by a timeline
  });

  it('should fold what is not newer than the horizon into the base', () => {
    const base = emptyProjectStats();
    const recent = emptyRecentEvidence();
    addRecentSignal(base, recent, 10, access('a.ts', 's5', 5)); // late: straight into the base
    addRecentSignal(base, recent, 10, access('a.ts', 's20', 20));
    expect(sessionsOf(base, 'a.ts')).toBe(1);
    foldRecentUpTo(base, recent, 20, 500);
    expect(sessionsOf(base, 'a.ts')).toBe(2);
    expect(recent.signals).toEqual([]);
  });
});
