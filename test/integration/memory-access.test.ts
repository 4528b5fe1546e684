// Access counters on real Elasticsearch, apart from the memory documents: a recall server that
// starts before any indexer of this version creates their index with the right mapping, and two
// servers counting the same memory at once lose no access and count none twice.
import type { MappingTypeMapping } from '@elastic/elasticsearch/lib/api/types';
import { anyOfFilter, memoryFilters } from '@engram/core';
import {
  accessUpdateOperations,
  accessWriteReport,
  BulkWriter,
  countersRequest,
  createElasticsearchClient,
  ensureRetrievalIndices,
  memoryAccessMapping,
  retrievalIndexNames,
  storedCounters,
} from '@engram/elasticsearch';
import { memoryDocument, withEmbedding, type MemoryDocument } from '@engram/core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { elasticsearchRecallStore } from '../../apps/retrieval/src/recall-store';
import { memoryRecord, PROJECT, TENANT } from '../../apps/retrieval/src/testing/records';
import { uniqueName } from './support/unique';

const SCOPE = { tenantId: TENANT, projectId: PROJECT };

describe('memory access counters (real Elasticsearch)', () => {
  const client = createElasticsearchClient(inject('infra').elasticsearchUrl);
  const indices = retrievalIndexNames(`${uniqueName('it-access')}.`);

  beforeAll(async () => {
    await ensureRetrievalIndices(client, indices, { dims: 3 });
    // As an installation whose indexer predates the counters: no counter index, no template.
    await client.indices.delete({ index: indices.memoryAccess });
    await client.indices.deleteIndexTemplate({ name: indices.memoryAccess });
    const memory = memoryRecord({ memoryId: 'm-count', accessCount: 2, lastAccessedAt: 1_000 });
    const { id, body } = memoryDocument(memory);
    await BulkWriter.forClient(client).write([
      { action: 'index', index: indices.memories, id, document: withEmbedding(body, null) },
    ]);
    await client.indices.refresh({ index: indices.memories });
  });

  afterAll(async () => {
    await client.indices.delete({ index: Object.values(indices), ignore_unavailable: true });
    for (const name of Object.values(indices)) {
      await client.indices.deleteIndexTemplate({ name }, { ignore: [404] });
    }
    await client.close();
  });

  const stored = async (store = elasticsearchRecallStore(client, indices)) => {
    await client.indices.refresh({ index: indices.memoryAccess, ignore_unavailable: true });
    const [doc] = await store.list<MemoryDocument>('memories', {
      scope: SCOPE,
      filter: [...memoryFilters({}, undefined), anyOfFilter('memoryId', ['m-count'])],
      size: 1,
    });
    return { accessCount: doc.source.accessCount, lastAccessedAt: doc.source.lastAccessedAt };
  };
  const access = (at: number) => ({
    ...SCOPE,
    memoryId: 'm-count',
    increment: 1,
    lastAccessedAt: at,
    firstRecordedAt: at,
  });

  it("should read a memory's own counts while there is no counter index", async () => {
    expect(await stored()).toEqual({ accessCount: 2, lastAccessedAt: 1_000 });
  });

  it('should create the counter index with its strict mapping before the first count', async () => {
    const store = elasticsearchRecallStore(client, indices);
    expect(await store.writeAccess([access(5_000)])).toMatchObject({ applied: 1, failed: [] });
    const mapping = await client.indices.getMapping({ index: indices.memoryAccess });
    const expected: MappingTypeMapping = memoryAccessMapping();
    expect(mapping[indices.memoryAccess].mappings).toMatchObject({
      dynamic: 'strict',
      properties: expected.properties,
    });
    expect(await stored(store)).toEqual({ accessCount: 3, lastAccessedAt: 5_000 });
  });

  it('should lose no access and count none twice when two servers count at once', async () => {
    const [a, b] = [
      elasticsearchRecallStore(client, indices),
      elasticsearchRecallStore(client, indices),
    ];
    // B reads the counter, A writes it, then B writes what it computed from its read.
    const ids = ['m-count'];
    const readByB = storedCounters(ids, await client.mget(countersRequest(indices, ids)));
    expect((await a.writeAccess([access(6_000)])).failed).toEqual([]);
    const planned = accessUpdateOperations(indices.memoryAccess, [access(7_000)], readByB);
    const stale = accessWriteReport(await client.bulk({ operations: planned.operations }), [
      access(7_000),
    ]);
    // The version B read is gone: its write is refused and handed back, not applied.
    expect(stale).toMatchObject({ applied: 0, failed: [access(7_000)] });
    // What AccessTracker does with it: write it again, from a fresh read.
    expect((await b.writeAccess(stale.failed)).failed).toEqual([]);
    expect(await stored()).toEqual({ accessCount: 5, lastAccessedAt: 7_000 });
  });
});
