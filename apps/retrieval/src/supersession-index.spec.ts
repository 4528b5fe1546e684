import type { Memory } from '@engram/contracts';
import { supersededBy } from '@engram/core';
import type { DeliveredOrTombstone } from '@engram/core';
import { describe, expect, it } from 'vitest';
import { withSupersession, type SupersessionCandidates } from './supersession-index';
import { memoryRecord, T0 } from './testing/records';

const DAY = 86_400_000;
const OLD = memoryRecord({
  memoryId: 'old',
  memoryType: 'decision',
  content: 'Orders uses axios for HTTP requests',
  relatedFiles: ['package.json'],
  createdAt: T0 - 90 * DAY,
});
const NEW = memoryRecord({
  memoryId: 'new',
  memoryType: 'decision',
  content: 'Orders replaced axios with undici for HTTP requests; axios is no longer a dependency',
  relatedFiles: ['package.json'],
  createdAt: T0 - DAY,
});

const item = (memory: Memory | null, key: string, offset = 0): DeliveredOrTombstone<Memory> =>
  memory === null
    ? {
        topic: 'memory.memories.v1',
        partition: 0,
        offset: String(offset),
        key,
        headers: {},
        event: null,
      }
    : {
        topic: 'memory.memories.v1',
        partition: 0,
        offset: String(offset),
        key,
        headers: {},
        event: memory,
      };

/** A store holding `stored`, answering with every memory of the asked type and project. */
function storeOf(stored: Memory[]): SupersessionCandidates {
  return (memory) =>
    Promise.resolve(
      stored.filter((m) => m.memoryType === memory.memoryType && m.projectId === memory.projectId),
    );
}

/** What the store holds after the batch: the last version of each id. */
function indexed(items: DeliveredOrTombstone<Memory>[]): Map<string, Memory> {
  const byId = new Map<string, Memory>();
  for (const i of items) if (i.event) byId.set(i.event.memoryId, i.event);
  return byId;
}

describe('withSupersession', () => {
  it('should write the stored older memory again, demoted, after the newer one', async () => {
    const out = indexed(await withSupersession([item(NEW, 'new')], storeOf([OLD])));
    expect(supersededBy(out.get('old')!)).toBe('new');
    expect(out.get('old')!.staleAt).toBe(NEW.createdAt);
    expect(out.get('new')!.relations.map((r) => [r.relationType, r.targetMemoryId])).toEqual([
      ['supersedes', 'old'],
    ]);
  });

  it('should demote an older memory indexed after the newer one is stored (any order)', async () => {
    const first = indexed(await withSupersession([item(NEW, 'new')], storeOf([])));
    expect(first.get('new')!.relations).toEqual([]);
    const later = indexed(await withSupersession([item(OLD, 'old')], storeOf([...first.values()])));
    expect(supersededBy(later.get('old')!)).toBe('new');
    expect(later.get('new')!.relations.map((r) => r.targetMemoryId)).toEqual(['old']);
  });

  it('should resolve two memories of one batch the same in either order', async () => {
    const a = indexed(
      await withSupersession([item(OLD, 'old', 0), item(NEW, 'new', 1)], storeOf([])),
    );
    const b = indexed(
      await withSupersession([item(NEW, 'new', 0), item(OLD, 'old', 1)], storeOf([])),
    );
    expect(a).toEqual(b);
    expect(supersededBy(a.get('old')!)).toBe('new');
  });

  it('should pass tombstones and unrelated memories through unchanged', async () => {
    const other = memoryRecord({ memoryId: 'other', memoryType: 'work_state' });
    const items = [item(null, 'gone'), item(other, 'other')];
    expect(await withSupersession(items, storeOf([OLD]))).toEqual(items);
  });
});
