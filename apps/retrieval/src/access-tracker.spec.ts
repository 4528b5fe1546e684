import type { AccessUpdate } from '@engram/core';
import { afterEach, describe, expect, it } from 'vitest';
import { AccessTracker, type AccessWrite } from './access-tracker';

const HIT = { tenantId: 'acme', projectId: 'api', memoryId: 'm1' };
const trackers: AccessTracker[] = [];

function tracker(write: AccessWrite, maxPendingIds = 2, clock = () => 1_000): AccessTracker {
  const created = new AccessTracker(write, { maxPendingIds, maxAgeMs: 60_000 }, clock);
  trackers.push(created);
  return created;
}

afterEach(async () => {
  for (const created of trackers.splice(0)) await created.close().catch(() => undefined);
});

describe('AccessTracker', () => {
  it('should coalesce accesses and write them once the batch is full, without blocking', async () => {
    const batches: AccessUpdate[][] = [];
    const tracked = tracker((updates) => {
      batches.push(updates);
      return Promise.resolve({ failed: [] });
    });
    tracked.record([HIT]);
    tracked.record([HIT]);
    expect(batches).toEqual([]);
    tracked.record([{ ...HIT, memoryId: 'm2' }]);
    await tracked.flush();
    expect(batches).toHaveLength(1);
    expect(batches[0].map((u) => [u.memoryId, u.increment])).toEqual([
      ['m1', 2],
      ['m2', 1],
    ]);
    expect(tracked.counters).toMatchObject({ written: 2, batches: 1, requeued: 0 });
  });

  it('should requeue a failed write and lose nothing', async () => {
    let calls = 0;
    const written: AccessUpdate[] = [];
    const tracked = tracker((updates) => {
      calls += 1;
      if (calls === 1) return Promise.reject(new Error('elasticsearch down'));
      written.push(...updates);
      return Promise.resolve({ failed: [] });
    }, 100);
    tracked.record([HIT]);
    await tracked.flush();
    expect(tracked.pending).toBe(1);
    tracked.record([HIT]);
    await tracked.close();
    expect(written).toEqual([expect.objectContaining({ memoryId: 'm1', increment: 2 })]);
    expect(tracked.pending).toBe(0);
  });
});
