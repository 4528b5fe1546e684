import { expect, it } from 'vitest';
import { DAY, NOW } from '../../retrieval/testing/fixtures';
import { ids, memories, type RecallStoreHarness } from './recall-store-contract.harness';

// The RecallStore contract, what writes do: tombstones, upserts by id, access counts.

export function storeWriteCases(h: RecallStoreHarness): void {
  const { index, searchMemories, scopeOf } = h;

  it('should delete a memory on its tombstone, and take a repeated tombstone calmly', async () => {
    const scope = scopeOf('tombstone');
    const corpus = memories(scope);
    await index({ memories: corpus });
    expect(ids((await searchMemories(scope, 'postgres pool')).bm25)).toEqual(['m-db']);
    await index({ deleteMemories: ['m-db'] });
    await index({ deleteMemories: ['m-db'] });
    const after = await searchMemories(scope, 'postgres pool');
    expect([...ids(after.bm25), ...ids(after.knn), ...after.sources.keys()]).toEqual([]);
  });

  it('should upsert by id: indexing again changes nothing, a new version replaces the old', async () => {
    const scope = scopeOf('idempotent');
    const corpus = memories(scope);
    await index({ memories: corpus });
    const first = await searchMemories(scope, 'auth token session mutex');
    await index({ memories: corpus });
    const again = await searchMemories(scope, 'auth token session mutex');
    expect(ids(again.bm25)).toEqual(ids(first.bm25));
    expect(ids(again.knn)).toEqual(ids(first.knn));
    const db = corpus.find((m) => m.memoryId === 'm-db')!;
    await index({ memories: [{ ...db, content: 'Redis cache eviction drops sessions' }] });
    expect((await searchMemories(scope, 'postgres')).bm25).toEqual([]);
    // (Elasticsearch refuses a zero query vector: every query here names a concept.)
    const evicted = await searchMemories(scope, 'eviction', { vector: 'redis cache' });
    expect(ids(evicted.bm25)).toEqual(['m-db']);
    expect(ids(evicted.knn)).toEqual(['m-db']);
  });

  it('should count accesses on memories of the same scope only', async () => {
    const scope = scopeOf('access');
    await index({ memories: memories(scope) });
    const update = {
      ...scope,
      memoryId: 'm-time',
      increment: 2,
      lastAccessedAt: NOW + DAY,
      firstRecordedAt: NOW,
    };
    expect((await h.store.writeAccess([update])).failed).toEqual([]);
    await h.store.writeAccess([{ ...update, tenantId: 'globex' }]);
    await h.settle();
    const found = await searchMemories(scope, 'fake timers');
    expect(found.sources.get('m-time')).toMatchObject({
      accessCount: 2,
      lastAccessedAt: NOW + DAY,
    });
  });
}
