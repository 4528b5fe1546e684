import { describe, expect, it } from 'vitest';
import { idleMergeDecision, type IdleMergePolicy } from './idle-merge';

const POLICY: IdleMergePolicy = { idleMs: 60_000, maxSegments: 4 };

describe('idleMergeDecision', () => {
  it('should start watching an index it sees for the first time, without merging it', () => {
    expect(idleMergeDecision(undefined, { writes: 10, segments: 17, now: 1_000 }, POLICY)).toEqual({
      watch: { writes: 10, changedAt: 1_000 },
      merge: false,
    });
  });

  it('should merge an index with many segments once it has been quiet for idleMs', () => {
    const watch = { writes: 10, changedAt: 1_000 };
    const seen = (now: number) => ({ writes: 10, segments: 17, now });
    expect(idleMergeDecision(watch, seen(60_999), POLICY).merge).toBe(false);
    expect(idleMergeDecision(watch, seen(61_000), POLICY)).toEqual({ watch, merge: true });
  });

  it('should restart the wait when new writes arrive', () => {
    const watch = { writes: 10, changedAt: 1_000 };
    expect(idleMergeDecision(watch, { writes: 11, segments: 17, now: 90_000 }, POLICY)).toEqual({
      watch: { writes: 11, changedAt: 90_000 },
      merge: false,
    });
  });

  it('should leave an index of maxSegments segments or fewer alone, however quiet', () => {
    const watch = { writes: 10, changedAt: 0 };
    expect(idleMergeDecision(watch, { writes: 10, segments: 4, now: 1e9 }, POLICY).merge).toBe(
      false,
    );
    expect(idleMergeDecision(watch, { writes: 10, segments: 5, now: 1e9 }, POLICY).merge).toBe(
      true,
    );
  });
});
