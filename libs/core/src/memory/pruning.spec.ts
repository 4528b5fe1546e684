import type { Memory } from '@engram/contracts';
import { describe, expect, it } from 'vitest';
import { DAY, memory, NOW } from '../retrieval/testing/fixtures';
import { PRUNED_TAG, prunedReason } from './memory-history';
import {
  decayedConfidence,
  NO_PRUNE_CRITERIA,
  PRUNE_RULE,
  pruneCreatedBefore,
  prunedVersion,
  pruneVerdict,
  selectForPruning,
  type PruneCriteria,
} from './pruning';

/** A memory idle for `days` (created and last accessed then). */
function idle(days: number, overrides: Partial<Memory> & { memoryId: string }): Memory {
  return memory({ createdAt: NOW - days * DAY, lastAccessedAt: NOW - days * DAY, ...overrides });
}

const criteria = (over: Partial<PruneCriteria>): PruneCriteria => ({
  ...NO_PRUNE_CRITERIA,
  ...over,
});

describe('pruneVerdict', () => {
  it('should keep what a person confirmed, whatever the criteria', () => {
    const verified = idle(400, {
      memoryId: 'v',
      userVerified: true,
      confidence: 0.01,
      staleAt: NOW - 300 * DAY,
    });
    const every = criteria({ olderThanDays: 30, belowConfidence: 0.5, stale: true });
    expect(pruneVerdict(verified, every, PRUNE_RULE, NOW)).toEqual({
      prune: false,
      reason: 'user-verified',
    });
    expect(pruneVerdict({ ...verified, userVerified: false }, every, PRUNE_RULE, NOW).prune).toBe(
      true,
    );
  });

  it('should keep memories created or accessed within the minimum idle time', () => {
    const stale = { staleAt: NOW - 2 * DAY, confidence: 0.05 };
    const fresh = memory({
      memoryId: 'f',
      createdAt: NOW - 100 * DAY,
      lastAccessedAt: NOW - 60_000,
      ...stale,
    });
    expect(pruneVerdict(fresh, criteria({ stale: true }), PRUNE_RULE, NOW)).toEqual({
      prune: false,
      reason: 'recent',
    });
    const older = { ...fresh, lastAccessedAt: NOW - 2 * DAY };
    expect(pruneVerdict(older, criteria({ stale: true }), PRUNE_RULE, NOW)).toEqual({
      prune: true,
      reason: 'stale',
    });
  });

  it('should require every criterion given, and name each in the reason', () => {
    const m = idle(100, { memoryId: 'm', staleAt: NOW - 50 * DAY, confidence: 0.3 });
    const both = criteria({ stale: true, olderThanDays: 90 });
    expect(pruneVerdict(m, both, PRUNE_RULE, NOW)).toEqual({
      prune: true,
      reason: 'stale+older-than-90d',
    });
    expect(pruneVerdict(m, criteria({ stale: true, olderThanDays: 120 }), PRUNE_RULE, NOW)).toEqual(
      { prune: false, reason: 'criteria' },
    );
    expect(pruneVerdict({ ...m, staleAt: null }, both, PRUNE_RULE, NOW).prune).toBe(false);
  });

  it('should count a superseded memory as stale, and say superseded', () => {
    const m = idle(10, { memoryId: 's', staleAt: NOW - 5 * DAY, tags: ['superseded-by:m-2'] });
    expect(pruneVerdict(m, criteria({ stale: true }), PRUNE_RULE, NOW)).toEqual({
      prune: true,
      reason: 'superseded',
    });
  });

  it('should decay confidence by the type half-life before comparing it', () => {
    // work_state halves every 7 days: 0.8 after 14 idle days is 0.2.
    const state = idle(14, { memoryId: 'w', memoryType: 'work_state', confidence: 0.8 });
    expect(decayedConfidence(state, NOW)).toBeCloseTo(0.2, 10);
    expect(pruneVerdict(state, criteria({ belowConfidence: 0.25 }), PRUNE_RULE, NOW)).toEqual({
      prune: true,
      reason: 'below-confidence-0.25',
    });
    // A decision has no half-life: it keeps 0.8 however long it sits.
    const decision = { ...state, memoryId: 'd', memoryType: 'decision' as const };
    expect(decayedConfidence(decision, NOW)).toBe(0.8);
    expect(pruneVerdict(decision, criteria({ belowConfidence: 0.25 }), PRUNE_RULE, NOW).prune).toBe(
      false,
    );
  });

  it('should narrow by scope and type before any criterion', () => {
    const m = idle(200, { memoryId: 'm', scope: 'global', memoryType: 'gotcha' });
    expect(
      pruneVerdict(m, criteria({ scopes: ['session'], olderThanDays: 90 }), PRUNE_RULE, NOW),
    ).toEqual({ prune: false, reason: 'scope' });
    expect(
      pruneVerdict(m, criteria({ types: ['dead_end'], olderThanDays: 90 }), PRUNE_RULE, NOW),
    ).toEqual({ prune: false, reason: 'type' });
    expect(
      pruneVerdict(
        m,
        criteria({ scopes: ['global'], types: ['gotcha'], olderThanDays: 90 }),
        PRUNE_RULE,
        NOW,
      ),
    ).toEqual({ prune: true, reason: 'older-than-90d' });
  });

  it("should apply seed 002's rules without criteria: session expiry and decayed confidence", () => {
    const none = NO_PRUNE_CRITERIA;
    expect(
      pruneVerdict(idle(8, { memoryId: 's', scope: 'session' }), none, PRUNE_RULE, NOW),
    ).toEqual({ prune: true, reason: 'session-expired-7d' });
    expect(
      pruneVerdict(idle(6, { memoryId: 's', scope: 'session' }), none, PRUNE_RULE, NOW).prune,
    ).toBe(false);
    // gotcha: 90-day half-life; 0.3 after 61 days ≈ 0.19 < 0.2.
    expect(
      pruneVerdict(idle(61, { memoryId: 'g', confidence: 0.3 }), none, PRUNE_RULE, NOW),
    ).toEqual({
      prune: true,
      reason: 'decayed-below-0.2',
    });
    // Below 0.2 but idle under 60 days: kept.
    expect(
      pruneVerdict(idle(30, { memoryId: 'g', confidence: 0.1 }), none, PRUNE_RULE, NOW).prune,
    ).toBe(false);
    // A global decision never decays.
    const decision = idle(900, {
      memoryId: 'd',
      scope: 'global',
      memoryType: 'decision',
      confidence: 0.3,
    });
    expect(pruneVerdict(decision, none, PRUNE_RULE, NOW).prune).toBe(false);
  });

  it('should not prune a version that is already the pruned one', () => {
    const m = prunedVersion(
      idle(100, { memoryId: 'p', staleAt: NOW - 90 * DAY }),
      'stale',
      NOW - 50 * DAY,
    );
    expect(pruneVerdict(m, criteria({ stale: true }), PRUNE_RULE, NOW)).toEqual({
      prune: false,
      reason: 'pruned',
    });
  });
});

describe('selectForPruning', () => {
  it('should select the same memories in id order whatever order they come in', () => {
    const memories = [
      idle(100, { memoryId: 'c', staleAt: NOW - 10 * DAY }),
      idle(100, { memoryId: 'a', staleAt: NOW - 10 * DAY }),
      idle(100, { memoryId: 'b' }),
      idle(100, { memoryId: 'd', staleAt: NOW - 10 * DAY, userVerified: true }),
    ];
    const stale = criteria({ stale: true });
    const once = selectForPruning(memories, stale, PRUNE_RULE, NOW);
    const reversed = selectForPruning([...memories].reverse(), stale, PRUNE_RULE, NOW);
    expect(once.map((c) => c.memory.memoryId)).toEqual(['a', 'c']);
    expect(reversed).toEqual(once);
  });
});

describe('prunedVersion', () => {
  it('should tag the reason, set staleAt and derive the same eventId on a retry', () => {
    const m = idle(100, { memoryId: 'm', tags: ['auth'] });
    const pruned = prunedVersion(m, 'older-than-90d', NOW);
    expect(pruned.tags).toEqual(['auth', `${PRUNED_TAG}older-than-90d`]);
    expect(pruned.staleAt).toBe(NOW);
    expect(pruned.timestamp).toBe(NOW);
    expect(pruned.eventId).not.toBe(m.eventId);
    expect(prunedVersion(m, 'older-than-90d', NOW + 1).eventId).toBe(pruned.eventId);
    expect(prunedReason(pruned)).toBe('older-than-90d');
    // An earlier staleAt is kept.
    expect(prunedVersion({ ...m, staleAt: NOW - DAY }, 'stale', NOW).staleAt).toBe(NOW - DAY);
  });
});

describe('pruneCreatedBefore', () => {
  it('should bound creation by the shortest idle time the criteria could select', () => {
    const bound = (over: Partial<PruneCriteria>) =>
      (NOW - pruneCreatedBefore(criteria(over), PRUNE_RULE, NOW)) / DAY;
    expect(bound({})).toBe(7);
    expect(bound({ stale: true })).toBe(1);
    expect(bound({ stale: true, olderThanDays: 90 })).toBe(90);
    // Whatever it selects was created before the bound.
    const memories = [1, 2, 6, 8, 30, 61, 91, 400].map((days) =>
      idle(days, { memoryId: `m-${days}`, scope: 'session', staleAt: NOW - DAY, confidence: 0.1 }),
    );
    for (const over of [{}, { stale: true }, { olderThanDays: 90 }, { belowConfidence: 0.5 }]) {
      const limit = pruneCreatedBefore(criteria(over), PRUNE_RULE, NOW);
      const selected = selectForPruning(memories, criteria(over), PRUNE_RULE, NOW);
      expect(selected.length).toBeGreaterThan(0);
      for (const { memory } of selected) expect(memory.createdAt).toBeLessThanOrEqual(limit);
    }
  });
});
