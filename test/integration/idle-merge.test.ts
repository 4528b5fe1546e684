// The retrieval indexer's idle merge against real Elasticsearch: an index written in several
// refreshes holds several segments; once quiet it is merged to one, documents and kNN intact.
import { Client } from '@elastic/elasticsearch';
import {
  createElasticsearchClient,
  IdleMerger,
  mergeToOneSegment,
  segmentsOf,
} from '@engram/elasticsearch';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { uniqueName } from './support/unique';

const BATCHES = 6;
const PER_BATCH = 20;

describe('idle merge of a search index (real Elasticsearch)', () => {
  const client = createElasticsearchClient(inject('infra').elasticsearchUrl);
  const index = uniqueName('it-idle-merge');
  let docs = 0;

  /** One bulk write and a refresh: one more segment. */
  async function writeBatch(): Promise<void> {
    const operations = Array.from({ length: PER_BATCH }, () => {
      docs += 1;
      const angle = docs / 10;
      return [
        { index: { _index: index, _id: `m${docs}` } },
        { content: `memory number ${docs}`, embedding: [Math.cos(angle), Math.sin(angle), 0.5] },
      ];
    }).flat();
    await client.bulk({ refresh: true, operations });
  }

  const segments = async () => (await segmentsOf(client, [index])).get(index)!;

  beforeAll(async () => {
    await client.indices.create({
      index,
      settings: { number_of_shards: 1, number_of_replicas: 0 },
      mappings: {
        properties: {
          content: { type: 'text' },
          embedding: { type: 'dense_vector', dims: 3, index: true, similarity: 'cosine' },
        },
      },
    });
    for (let i = 0; i < BATCHES; i += 1) await writeBatch();
  });

  afterAll(async () => {
    await client.indices.delete({ index }, { ignore: [404] });
    await client.close();
  });

  it('should wait while writes go on, then merge the quiet index to one segment, once', async () => {
    let now = 1_000_000;
    const merger = new IdleMerger(client, [index], {
      policy: { idleMs: 60_000, maxSegments: 4 },
      clock: () => now,
    });
    const before = await segments();
    expect(before.segments).toBeGreaterThan(4);

    expect(await merger.check()).toEqual([]); // first look: the watch starts
    now += 59_000;
    await writeBatch(); // a write restarts the wait
    now += 2_000;
    expect(await merger.check()).toEqual([]);
    now += 59_999;
    expect(await merger.check()).toEqual([]);
    now += 1;
    expect(await merger.check()).toEqual([index]);

    const after = await segments();
    expect(after.segments).toBe(1);
    expect((await client.count({ index })).count).toBe(docs);
    now += 600_000;
    expect(await merger.check()).toEqual([]); // one segment: nothing left to merge
    expect(merger.counters).toMatchObject({ merges: 1, failures: 0 });

    const nearest = await client.search<{ content: string }>({
      index,
      knn: {
        field: 'embedding',
        query_vector: [Math.cos(0.5), Math.sin(0.5), 0.5],
        k: 1,
        num_candidates: 50,
      },
    });
    expect(nearest.hits.hits[0]?._id).toBe('m5');
  });

  it('should count a failed look and keep going', async () => {
    const merger = new IdleMerger(client, [uniqueName('it-no-such-index')], {
      policy: { idleMs: 0, maxSegments: 0 },
    });
    expect(await merger.check()).toEqual([]);
    expect(merger.counters.failures).toBe(1);
  });

  it("should outlast the client's request timeout on a merge that takes longer", async () => {
    // A request that waited for this merge was cut off at the client's timeout (undici's
    // headers timeout) and re-sent; the merge is now a task that is polled.
    const requestTimeoutMs = 1_000;
    const impatient = new Client({
      node: inject('infra').elasticsearchUrl,
      requestTimeout: requestTimeoutMs,
      maxRetries: 0,
    });
    const big = uniqueName('it-long-merge');
    try {
      await client.indices.create({
        index: big,
        settings: { number_of_shards: 1, number_of_replicas: 0 },
        mappings: {
          properties: {
            embedding: { type: 'dense_vector', dims: 96, index: true, similarity: 'cosine' },
          },
        },
      });
      let seed = 1;
      const next = () => (seed = (seed * 48_271) % 2_147_483_647) / 2_147_483_647 - 0.5;
      for (let batch = 0; batch < 5; batch += 1) {
        const operations = Array.from({ length: 2_500 }, () => [
          { index: { _index: big } },
          { embedding: Array.from({ length: 96 }, next) },
        ]).flat();
        await client.bulk({ refresh: true, operations });
      }
      expect((await segmentsOf(client, [big])).get(big)!.segments).toBeGreaterThan(1);

      const started = performance.now();
      await mergeToOneSegment(impatient, big, { pollMs: 200 });
      const elapsedMs = performance.now() - started;

      expect(elapsedMs).toBeGreaterThan(requestTimeoutMs); // a waiting request would have failed
      expect((await segmentsOf(client, [big])).get(big)!.segments).toBe(1);
      expect((await client.count({ index: big })).count).toBe(12_500);
    } finally {
      await impatient.close();
      await client.indices.delete({ index: big }, { ignore: [404] });
    }
  });
});
