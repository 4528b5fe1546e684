// The recall server's in-memory copy of the access counters, on real Elasticsearch: it loads what
// is stored, follows other writers, seeds first counters without reading the memories, and keeps
// the guarded writes exact when its copy is stale (another server, a deleted counter).
import type { AccessUpdate } from '@engram/core';
import {
  AccessCounterMirror,
  BulkWriter,
  createElasticsearchClient,
  ensureMemoryAccessIndex,
  ensureRetrievalIndices,
  retrievalIndexNames,
  writeAccessUpdates,
} from '@engram/elasticsearch';
import { memoryDocument, withEmbedding } from '@engram/core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { memoryRecord, PROJECT, TENANT } from '../../apps/retrieval/src/testing/records';
import { eventually, uniqueName } from './support/unique';

const SCOPE = { tenantId: TENANT, projectId: PROJECT };
const MEMORIES = ['m-a', 'm-b', 'm-c', 'm-seed', 'm-deleted'];

describe('access counter mirror (real Elasticsearch)', () => {
  const client = createElasticsearchClient(inject('infra').elasticsearchUrl);
  const indices = retrievalIndexNames(`${uniqueName('it-mirror')}.`);
  const mirrors: AccessCounterMirror[] = [];
  /** The paths of the requests this test's client sends. */
  const requests: string[] = [];

  const access = (memoryId: string, at: number, extra: Partial<AccessUpdate> = {}) => ({
    ...SCOPE,
    memoryId,
    increment: 1,
    lastAccessedAt: at,
    firstRecordedAt: at,
    ...extra,
  });
  const loadedMirror = async () => {
    const mirror = new AccessCounterMirror(client, indices.memoryAccess, { pollMs: 100 });
    mirrors.push(mirror);
    await mirror.start();
    expect(mirror.ready).toBe(true);
    return mirror;
  };
  const storedCounter = async (memoryId: string) => {
    const doc = await client.get<{ accessCount: number; lastAccessedAt: number }>(
      { index: indices.memoryAccess, id: memoryId },
      { ignore: [404] },
    );
    return doc.found ? doc._source : null;
  };

  beforeAll(async () => {
    await ensureRetrievalIndices(client, indices, { dims: 3 });
    await ensureMemoryAccessIndex(client, indices.memoryAccess);
    await BulkWriter.forClient(client).write(
      MEMORIES.map((memoryId) => {
        const { id, body } = memoryDocument(
          memoryRecord({ memoryId, accessCount: 2, lastAccessedAt: 1_000 }),
        );
        return {
          action: 'index',
          index: indices.memories,
          id,
          document: withEmbedding(body, null),
        };
      }),
    );
    await client.indices.refresh({ index: indices.memories });
    client.diagnostic.on('request', (_error, event) => {
      if (event) requests.push(event.meta.request.params.path);
    });
  });

  afterAll(async () => {
    await Promise.all(mirrors.map((mirror) => mirror.close()));
    await client.indices.delete({ index: Object.values(indices), ignore_unavailable: true });
    for (const name of Object.values(indices)) {
      await client.indices.deleteIndexTemplate({ name }, { ignore: [404] });
    }
    await client.close();
  });

  it('should hold the stored counters once loaded and follow another writer within a poll', async () => {
    // Counted by a server without a mirror (it reads each memory and counter first).
    const counted = await writeAccessUpdates(client, indices, [
      access('m-a', 5_000),
      access('m-b', 6_000),
    ]);
    expect(counted).toMatchObject({ applied: 2, failed: [] });
    await client.indices.refresh({ index: indices.memoryAccess });
    const mirror = await loadedMirror();
    expect(mirror.counted(['m-a', 'm-b', 'm-c'])).toEqual(
      new Map([
        ['m-a', expect.objectContaining({ ...SCOPE, accessCount: 3, lastAccessedAt: 5_000 })],
        ['m-b', expect.objectContaining({ ...SCOPE, accessCount: 3, lastAccessedAt: 6_000 })],
      ]),
    );
    // Another server counts m-a again; the mirror sees it once Elasticsearch has refreshed.
    await writeAccessUpdates(client, indices, [access('m-a', 7_000)]);
    const seen = await eventually(
      () => {
        const counter = mirror.get('m-a');
        return counter?.accessCount === 4 ? counter : undefined;
      },
      { timeoutMs: 10_000, state: () => mirror.get('m-a') },
    );
    expect(seen.lastAccessedAt).toBe(7_000);
  });

  it('should create a first counter from the counts the reader saw, reading nothing first', async () => {
    const mirror = await loadedMirror();
    requests.length = 0;
    const report = await writeAccessUpdates(
      client,
      indices,
      [access('m-seed', 8_000, { seen: { accessCount: 2, lastAccessedAt: 1_000 } })],
      mirror,
    );
    expect(report).toMatchObject({ applied: 1, failed: [] });
    expect(requests.filter((path) => path.endsWith('/_mget'))).toEqual([]);
    expect(await storedCounter('m-seed')).toMatchObject({ accessCount: 3, lastAccessedAt: 8_000 });
    // Its own write is in the mirror at once, with the version to guard the next one.
    expect(mirror.get('m-seed')).toMatchObject({ accessCount: 3, lastAccessedAt: 8_000 });
    await writeAccessUpdates(client, indices, [access('m-seed', 9_000)], mirror);
    expect(await storedCounter('m-seed')).toMatchObject({ accessCount: 4, lastAccessedAt: 9_000 });
  });

  it('should lose no access and count none twice when its version is stale', async () => {
    const mirror = await loadedMirror();
    const before = (await storedCounter('m-b'))!.accessCount;
    // Another server counts m-b twice; this mirror has not polled since.
    await mirror.close();
    await writeAccessUpdates(client, indices, [access('m-b', 10_000)]);
    await writeAccessUpdates(client, indices, [access('m-b', 10_500)]);
    const stale = await writeAccessUpdates(client, indices, [access('m-b', 11_000)], mirror);
    // Refused on the version, handed back to be retried, and the mirror re-read meanwhile.
    expect(stale).toMatchObject({ applied: 0, missing: 0, failed: [access('m-b', 11_000)] });
    expect(mirror.get('m-b')?.accessCount).toBe(before + 2);
    const retried = await writeAccessUpdates(client, indices, stale.failed, mirror);
    expect(retried).toMatchObject({ applied: 1, failed: [] });
    expect(await storedCounter('m-b')).toMatchObject({
      accessCount: before + 3,
      lastAccessedAt: 11_000,
    });
  });

  it("should drop an access to a memory whose counter was deleted since (the memory's tombstone)", async () => {
    const mirror = await loadedMirror();
    const seen = { accessCount: 2, lastAccessedAt: 1_000 };
    await writeAccessUpdates(client, indices, [access('m-deleted', 12_000, { seen })], mirror);
    expect(mirror.get('m-deleted')).toBeDefined();
    await client.delete({ index: indices.memoryAccess, id: 'm-deleted' });
    const report = await writeAccessUpdates(
      client,
      indices,
      [access('m-deleted', 13_000, { seen })],
      mirror,
    );
    expect(report).toEqual({ applied: 0, missing: 1, failed: [] });
    expect(mirror.get('m-deleted')).toBeUndefined();
    expect(await storedCounter('m-deleted')).toBeNull();
  });

  it('should start on a counter index that does not exist yet, and follow it once written', async () => {
    // A recall server started before any memory was ever recalled: no counter index yet.
    const fresh = retrievalIndexNames(`${uniqueName('it-mirror-fresh')}.`);
    const mirror = new AccessCounterMirror(client, fresh.memoryAccess, { pollMs: 100 });
    mirrors.push(mirror);
    try {
      await mirror.start();
      expect(mirror.ready).toBe(true);
      expect(mirror.counted(['m-a'])).toEqual(new Map());
      expect(await mirror.reread(['m-a'])).toEqual(new Set(['m-a']));

      // Another server writes the first counters: the mirror finds the new index on a later poll.
      await ensureMemoryAccessIndex(client, fresh.memoryAccess);
      const seen = { accessCount: 2, lastAccessedAt: 1_000 };
      const writer = new AccessCounterMirror(client, fresh.memoryAccess);
      mirrors.push(writer);
      await writer.start();
      const written = await writeAccessUpdates(
        client,
        fresh,
        [access('m-a', 14_000, { seen })],
        writer,
      );
      expect(written).toMatchObject({ applied: 1, failed: [] });
      const counter = await eventually(() => mirror.get('m-a'), {
        timeoutMs: 10_000,
        state: () => mirror.counted(['m-a']),
      });
      expect(counter).toMatchObject({ ...SCOPE, accessCount: 3, lastAccessedAt: 14_000 });
    } finally {
      await client.indices.delete({ index: fresh.memoryAccess, ignore_unavailable: true });
      await client.indices.deleteIndexTemplate({ name: fresh.memoryAccess }, { ignore: [404] });
    }
  });
});
