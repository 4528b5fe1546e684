import { describe, expect, it } from 'vitest';
import { AccessBatcher, applyAccessUpdate, effectiveAccess } from './access-batcher';
import { SCOPE } from './testing/fixtures';

const hit = (memoryId: string, tenantId: string = SCOPE.tenantId) => ({
  ...SCOPE,
  tenantId,
  memoryId,
});

describe('AccessBatcher', () => {
  it('should coalesce returns into one increment and the latest time per memory', () => {
    const batcher = new AccessBatcher({ maxPendingIds: 100, maxAgeMs: 1_000 });
    batcher.record([hit('m1'), hit('m2'), hit('m1')], 1_000); // m1 twice in one recall: once
    batcher.record([hit('m1')], 1_500);
    batcher.record([hit('m1')], 1_200); // late arrival does not move time back
    expect(batcher.size).toBe(2);
    expect(batcher.drain()).toEqual([
      { ...hit('m1'), increment: 3, lastAccessedAt: 1_500, firstRecordedAt: 1_000 },
      { ...hit('m2'), increment: 1, lastAccessedAt: 1_000, firstRecordedAt: 1_000 },
    ]);
    expect(batcher.size).toBe(0);
  });

  it('should keep the highest counts the readers saw, for seeding a first counter', () => {
    const batcher = new AccessBatcher();
    batcher.record([hit('m1')], 1_000); // a reader that passed no counts
    batcher.record([{ ...hit('m1'), seen: { accessCount: 4, lastAccessedAt: 700 } }], 1_100);
    batcher.record([{ ...hit('m1'), seen: { accessCount: 3, lastAccessedAt: 900 } }], 1_200);
    expect(batcher.drain()).toEqual([
      {
        ...hit('m1'),
        increment: 3,
        lastAccessedAt: 1_200,
        firstRecordedAt: 1_000,
        seen: { accessCount: 4, lastAccessedAt: 900 },
      },
    ]);
  });

  it('should keep tenants apart even for equal memory ids', () => {
    const batcher = new AccessBatcher();
    batcher.record([hit('m', 'tenant-b'), hit('m', 'tenant-a')], 5);
    expect(batcher.drain().map((u) => u.tenantId)).toEqual(['tenant-a', 'tenant-b']);
  });

  it('should flush by size', () => {
    const batcher = new AccessBatcher({ maxPendingIds: 2, maxAgeMs: 60_000 });
    batcher.record([hit('a')], 0);
    expect(batcher.takeDue(1)).toEqual([]);
    batcher.record([hit('b')], 1);
    expect(batcher.takeDue(1).map((u) => u.memoryId)).toEqual(['a', 'b']);
  });

  it('should flush by the age of the oldest waiting access', () => {
    const batcher = new AccessBatcher({ maxPendingIds: 100, maxAgeMs: 5_000 });
    expect(batcher.shouldFlush(10_000)).toBe(false); // nothing waits
    batcher.record([hit('a')], 1_000);
    batcher.record([hit('b')], 4_000);
    expect(batcher.oldestRecordedAt()).toBe(1_000);
    expect(batcher.shouldFlush(5_999)).toBe(false);
    expect(batcher.shouldFlush(6_000)).toBe(true);
  });

  it('should lose nothing when a failed write is requeued', () => {
    const batcher = new AccessBatcher();
    batcher.record([hit('a')], 100);
    const failed = batcher.drain();
    batcher.record([hit('a')], 200);
    batcher.requeue(failed);
    expect(batcher.drain()).toEqual([
      { ...hit('a'), increment: 2, lastAccessedAt: 200, firstRecordedAt: 100 },
    ]);
  });
});

describe('applyAccessUpdate', () => {
  it('should add the increment and never move lastAccessedAt backwards', () => {
    expect(
      applyAccessUpdate(
        { accessCount: 4, lastAccessedAt: 900 },
        { increment: 2, lastAccessedAt: 500 },
      ),
    ).toEqual({
      accessCount: 6,
      lastAccessedAt: 900,
    });
    expect(
      applyAccessUpdate(
        { accessCount: 0, lastAccessedAt: 0 },
        { increment: 1, lastAccessedAt: 500 },
      ),
    ).toEqual({
      accessCount: 1,
      lastAccessedAt: 500,
    });
  });
});

describe('effectiveAccess', () => {
  const record = { accessCount: 2, lastAccessedAt: 1_000 };

  it("should be the record's counts while nothing was counted apart", () => {
    expect(effectiveAccess(record, null)).toEqual(record);
  });

  it('should take the counted accesses, which started from the record', () => {
    expect(effectiveAccess(record, { accessCount: 7, lastAccessedAt: 3_000 })).toEqual({
      accessCount: 7,
      lastAccessedAt: 3_000,
    });
  });

  it('should neither double nor lower counts a re-published record carries', () => {
    // Feedback re-publishes the memory with the counts it read (7, 3000); a later access made 8.
    const republished = { accessCount: 7, lastAccessedAt: 3_000 };
    expect(effectiveAccess(republished, { accessCount: 8, lastAccessedAt: 4_000 })).toEqual({
      accessCount: 8,
      lastAccessedAt: 4_000,
    });
    // A record imported with more accesses than were counted here keeps them.
    expect(effectiveAccess({ accessCount: 50, lastAccessedAt: 500 }, republished)).toEqual({
      accessCount: 50,
      lastAccessedAt: 3_000,
    });
  });
});
