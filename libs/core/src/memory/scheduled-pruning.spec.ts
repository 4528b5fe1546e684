import type { Memory } from '@engram/contracts';
import { describe, expect, it } from 'vitest';
import { observerSettings } from '../observation/observer-settings';
import { DAY, memory, NOW } from '../retrieval/testing/fixtures';
import { prunedReason } from './memory-history';
import { prunedVersion } from './pruning';
import { scheduledWorkUnitOutcomePrunes } from './scheduled-pruning';

/** A work_unit_outcome written `days` ago (its verdict), never accessed since. */
function outcome(memoryId: string, days: number, over: Partial<Memory> = {}): Memory {
  const at = NOW - days * DAY;
  return memory({
    memoryId,
    memoryType: 'work_unit_outcome',
    scope: 'work_unit',
    createdAt: at,
    lastAccessedAt: at,
    ...over,
  });
}

describe('scheduledWorkUnitOutcomePrunes (issue #20, seed 002 §13)', () => {
  const memories = [
    outcome('wuo-old', 120),
    outcome('wuo-91', 91),
    outcome('wuo-89', 89),
    outcome('wuo-verified', 200, { userVerified: true }),
    memory({ memoryId: 'gotcha-old', memoryType: 'gotcha', createdAt: NOW - 400 * DAY }),
  ];

  it('should prune work_unit_outcome memories older than the retention, as the manual prune does', () => {
    const { versions, tombstones } = scheduledWorkUnitOutcomePrunes(memories, 90, NOW);
    expect(versions.map((v) => v.memoryId)).toEqual(['wuo-91', 'wuo-old']);
    expect(versions[0]).toEqual(prunedVersion(memories[1], 'older-than-90d', NOW));
    expect(versions.map(prunedReason)).toEqual(['older-than-90d', 'older-than-90d']);
    expect(versions.every((v) => v.staleAt === NOW && v.timestamp === NOW)).toBe(true);
    expect(tombstones).toEqual(['wuo-91', 'wuo-old']);
  });

  it('should take the retention from the observer settings: 90 days, 0 to disable, no less', () => {
    expect(observerSettings().workUnitOutcomeRetentionDays).toBe(90);
    expect(observerSettings({ workUnitOutcomeRetentionDays: 0 }).workUnitOutcomeRetentionDays).toBe(
      0,
    );
    expect(() => observerSettings({ workUnitOutcomeRetentionDays: -1 })).toThrow(
      /workUnitOutcomeRetentionDays must be an integer >= 0/,
    );
  });

  it('should follow the configured retention, and prune nothing when it is 0', () => {
    expect(scheduledWorkUnitOutcomePrunes(memories, 100, NOW).tombstones).toEqual(['wuo-old']);
    expect(scheduledWorkUnitOutcomePrunes(memories, 0, NOW)).toEqual({
      versions: [],
      tombstones: [],
    });
  });

  it('should give the same writes for the same memories and clock, and none once they are applied', () => {
    const first = scheduledWorkUnitOutcomePrunes(memories, 90, NOW);
    expect(scheduledWorkUnitOutcomePrunes([...memories].reverse(), 90, NOW)).toEqual(first);
    const gone = new Set(first.tombstones);
    const after = memories.filter((m) => !gone.has(m.memoryId));
    expect(scheduledWorkUnitOutcomePrunes(after, 90, NOW + 60_000)).toEqual({
      versions: [],
      tombstones: [],
    });
  });

  it('should only tombstone a memory whose pruned version an interrupted run already wrote', () => {
    const interrupted = prunedVersion(outcome('wuo-half', 95), 'older-than-90d', NOW - DAY);
    const { versions, tombstones } = scheduledWorkUnitOutcomePrunes([interrupted], 90, NOW);
    expect(versions).toEqual([]);
    expect(tombstones).toEqual(['wuo-half']);
  });
});
