// The recall's candidate searches on real Elasticsearch: the tiers asked together share one
// `_msearch`, each gets its own lists (kNN hits with their cosine and without their vectors),
// and one failing search fails only its own query.
import {
  CandidateSearcher,
  createElasticsearchClient,
  ensureRetrievalIndices,
  retrievalIndexDefinition,
  retrievalIndexNames,
  scopeFilter,
  type CandidateQuery,
} from '@engram/elasticsearch';
import { embeddingFields } from '@engram/core';
import { modelVector } from '@engram/core';
import type { DiagnosticListenerFull } from '@elastic/transport/lib/Diagnostic';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { uniqueName } from './support/unique';

const MODEL = 'it-three-d@1';
const SCOPE = { tenantId: 'acme', projectId: 'shop' };

interface Doc {
  text: string;
  embedding: number[] | null;
}

describe('CandidateSearcher (real Elasticsearch)', () => {
  const client = createElasticsearchClient(inject('infra').elasticsearchUrl);
  const indices = retrievalIndexNames(`${uniqueName('it-candidates')}.`);
  const requests: string[] = [];
  const countRequests: DiagnosticListenerFull = (_error, event) => {
    if (event) requests.push(event.meta.request.params.path);
  };

  beforeAll(async () => {
    await ensureRetrievalIndices(client, indices, { dims: 3 });
    const docs: [string, string, string, number[]][] = [
      [indices.memories, 'm-kafka', 'kafka consumer rebalance', [1, 0, 0]],
      [indices.memories, 'm-neo4j', 'neo4j merge idempotent', [0, 1, 0]],
      [indices.episodes, 'e-kafka', 'kafka offsets episode', [0.6, 0.8, 0]],
    ];
    await client.bulk({
      refresh: true,
      operations: docs.flatMap(([index, id, text, embedding]) => [
        { index: { _index: index, _id: id } },
        { ...SCOPE, text, ...embeddingFields(modelVector(MODEL, embedding)) },
      ]),
    });
    client.diagnostic.on('request', countRequests);
  });

  afterAll(async () => {
    client.diagnostic.off('request', countRequests);
    await client.indices.delete({ index: Object.values(indices), ignore_unavailable: true });
    for (const name of Object.values(indices)) {
      await client.indices.deleteIndexTemplate({ name }, { ignore: [404] });
    }
    await client.close();
  });

  const query = (index: string, text: string): CandidateQuery => ({
    index,
    text,
    vector: modelVector(MODEL, [1, 0, 0]),
    filter: scopeFilter(SCOPE),
    size: 5,
    minSimilarity: 0.2,
  });

  it('should answer the tiers asked together from one _msearch, each with its own lists', async () => {
    const searcher = new CandidateSearcher(client);
    requests.length = 0;
    const [memories, episodes, turns] = await Promise.all([
      searcher.search<Doc>(query(indices.memories, 'neo4j merge')),
      searcher.search<Doc>(query(indices.episodes, 'offsets')),
      searcher.search<Doc>(query(indices.turns, 'kafka')), // never written: no index yet
    ]);
    expect(requests).toEqual(['/_msearch']);

    expect(memories.bm25.map((hit) => hit.id)).toEqual(['m-neo4j']);
    expect(memories.knn).toEqual([{ id: 'm-kafka', score: 1, similarity: 1 }]);
    // BM25: the vector kept (stored packed, read back as numbers).
    expect(memories.sources.get('m-neo4j')?.embedding).toEqual([0, 1, 0]);
    expect(memories.sources.get('m-kafka')?.embedding).toBeUndefined(); // kNN: cosine instead

    expect(episodes.bm25.map((hit) => hit.id)).toEqual(['e-kafka']);
    expect(episodes.knn?.[0]).toMatchObject({ id: 'e-kafka' });
    expect(episodes.knn?.[0].similarity).toBeCloseTo(0.6, 6);
    expect(episodes.sources.get('e-kafka')?.embedding).toEqual([0.6, 0.8, 0].map(Math.fround));

    expect(turns).toEqual({ bm25: [], knn: [], sources: new Map() });
  });

  it('should fail only the query whose search Elasticsearch refuses', async () => {
    const searcher = new CandidateSearcher(client);
    const refused = {
      ...query(indices.memories, 'kafka'),
      filter: [{ term: { embedding: 'x' } }],
    };
    const [bad, good] = await Promise.allSettled([
      searcher.search<Doc>(refused),
      searcher.search<Doc>(query(indices.memories, 'kafka')),
    ]);
    expect(bad.status).toBe('rejected');
    expect(String((bad as PromiseRejectedResult).reason)).toMatch(/refused a recall search/);
    expect(good.status === 'fulfilled' && good.value.bm25.map((hit) => hit.id)).toEqual([
      'm-kafka',
    ]);
  });

  it('should read the vectors of an index an older version created (numbers in _source)', async () => {
    const older = retrievalIndexNames(`${uniqueName('it-candidates-v1')}.`);
    const current = retrievalIndexDefinition('memories', { dims: 3 });
    const { embeddingPacked: _added, ...properties } = current.mappings!.properties!;
    const { _source: _excludes, ...mappings } = current.mappings!;
    await client.indices.create({
      index: older.memories,
      settings: current.settings,
      mappings: { ...mappings, properties },
    });
    try {
      await client.index({
        index: older.memories,
        id: 'm-old',
        refresh: true,
        document: {
          ...SCOPE,
          text: 'kafka lag',
          embedding: [0, 1, 0],
          embeddingModel: MODEL,
          embeddingDims: 3,
        },
      });
      // Start-up of this version: the packed field is added, the index stays as it is.
      await ensureRetrievalIndices(client, older, { dims: 3 });
      const found = await new CandidateSearcher(client).search<Doc>(query(older.memories, 'kafka'));
      expect(found.bm25.map((hit) => hit.id)).toEqual(['m-old']);
      expect(found.sources.get('m-old')?.embedding).toEqual([0, 1, 0]);
    } finally {
      await client.indices.delete({ index: Object.values(older), ignore_unavailable: true });
      for (const name of Object.values(older)) {
        await client.indices.deleteIndexTemplate({ name }, { ignore: [404] });
      }
    }
  });
});
