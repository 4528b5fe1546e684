import { createElasticsearchClient, elasticsearchHealth, ensureIndex } from '@engram/elasticsearch';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { uniqueName } from './support/unique';

const DOCS = [
  {
    id: 'm1',
    content: 'Kafka consumer groups rebalance when a member leaves',
    embedding: [1, 0, 0],
    tenantId: 't1',
  },
  {
    id: 'm2',
    content: 'Neo4j MERGE keeps graph writes idempotent',
    embedding: [0, 1, 0],
    tenantId: 't1',
  },
  {
    id: 'm3',
    content: 'Elasticsearch dense vectors support kNN search',
    embedding: [0, 0, 1],
    tenantId: 't2',
  },
];

describe('Elasticsearch', () => {
  const url = inject('infra').elasticsearchUrl;
  const client = createElasticsearchClient(url);
  const index = uniqueName('it-memories');

  beforeAll(async () => {
    const definition = {
      mappings: {
        properties: {
          content: { type: 'text' as const },
          tenantId: { type: 'keyword' as const },
          embedding: {
            type: 'dense_vector' as const,
            dims: 3,
            index: true,
            similarity: 'cosine' as const,
          },
        },
      },
    };
    await ensureIndex(client, index, definition);
    await client.bulk({
      refresh: true,
      operations: DOCS.flatMap(({ id, ...doc }) => [{ index: { _index: index, _id: id } }, doc]),
    });
  });

  afterAll(async () => {
    await client.indices.delete({ index });
    await client.close();
  });

  it('should create an index once and find it the second time', async () => {
    const other = uniqueName('it-setup');
    const definition = { mappings: { properties: { content: { type: 'text' as const } } } };
    expect(await ensureIndex(client, other, definition)).toBe('created');
    expect(await ensureIndex(client, other, definition)).toBe('exists');
    await client.indices.delete({ index: other });
  });

  it('should report health and send the X-Elastic-Product header', async () => {
    expect((await elasticsearchHealth(client)).ok).toBe(true);
    const response = await fetch(`${url}/_cluster/health`);
    expect(response.headers.get('x-elastic-product')).toBe('Elasticsearch');
  });

  it('should rank by BM25', async () => {
    const result = await client.search({ index, query: { match: { content: 'consumer groups' } } });
    expect(result.hits.hits[0]._id).toBe('m1');
  });

  it('should find nearest neighbours with kNN, filtered by tenant', async () => {
    const result = await client.search({
      index,
      knn: {
        field: 'embedding',
        query_vector: [0.1, 0.9, 0.2],
        k: 2,
        num_candidates: 10,
        filter: { term: { tenantId: 't1' } },
      },
    });
    expect(result.hits.hits.map((h) => h._id)).toEqual(['m2', 'm1']);
  });

  it('should combine a BM25 query and kNN in one search', async () => {
    const result = await client.search({
      index,
      query: { match: { content: 'kNN search' } },
      knn: { field: 'embedding', query_vector: [0, 0.2, 1], k: 1, num_candidates: 10 },
    });
    expect(result.hits.hits[0]._id).toBe('m3');
  });

  it('should overwrite by explicit _id (idempotent upsert)', async () => {
    await client.index({
      index,
      id: 'm2',
      document: { ...DOCS[1], content: 'updated' },
      refresh: true,
    });
    await client.index({
      index,
      id: 'm2',
      document: { ...DOCS[1], content: 'updated' },
      refresh: true,
    });
    const count = await client.count({ index });
    expect(count.count).toBe(3);
  });
});
