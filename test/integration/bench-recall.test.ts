import { createElasticsearchClient } from '@engram/elasticsearch';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { benchRecallDistributed } from '../../apps/engram/src/commands/bench-recall-distributed';
import {
  formatDistributedRecallBench,
  type DistributedRecallBench,
} from '../../apps/engram/src/commands/bench-recall-distributed-report';
import { uniqueName } from './support/unique';

// `engram bench recall --distributed` end to end at a tiny size: the synthetic corpus bulk-written
// into fresh indices of the real Elasticsearch, Recall over real gRPC against the real server, the
// indices and their templates deleted afterwards. The figures themselves are not asserted.

describe('engram bench recall --distributed (real Elasticsearch, real gRPC)', () => {
  const infra = inject('infra');
  const es = createElasticsearchClient(infra.elasticsearchUrl);
  const prefix = uniqueName('it-bench-recall');

  afterAll(() => es.close());

  it('indexes 200 memories, recalls 5 queries sequentially and 2 in flight, and cleans up', async () => {
    const result: DistributedRecallBench = await benchRecallDistributed({
      elasticsearchUrl: infra.elasticsearchUrl,
      sizes: [200],
      queries: 5,
      warmup: 12,
      inFlight: 2,
      indexPrefix: prefix,
      progress: false,
    });

    expect(result).toMatchObject({ benchmark: 'recall', mode: 'distributed', queries: 5 });
    const [size] = result.sizes;
    expect(size.memories).toBe(200);
    expect(size.index).toBe(`${prefix}-200.engram-memories`);
    expect(size.indexing.docsPerSecond).toBeGreaterThan(0);
    expect(size.indexing.bulkRequests).toBe(1);
    for (const run of [size.sequential, size.concurrent]) {
      expect(run.queries).toBe(5);
      expect(run.emptyAnswers).toBe(0);
      expect(run.latency.p50).toBeGreaterThan(0);
      expect(run.latency.p99).toBeGreaterThanOrEqual(run.latency.p50);
      expect(run.throughput).toBeGreaterThan(0);
      expect(run.server.total.p50).toBeGreaterThan(0);
      expect(run.server.total.p50).toBeLessThanOrEqual(run.latency.p99);
      // The parts of the client's time add up to all of it (rounding aside).
      const { elasticsearchTook, ...parts } = run.shares;
      const shares = Object.values(parts);
      expect(shares.every((share) => share >= 0)).toBe(true);
      expect(shares.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 1);
      expect(run.shares.search).toBeGreaterThan(0);
      // Elasticsearch's own `took` of every _msearch: BM25's during the embedding, kNN's after.
      expect(elasticsearchTook).toBeGreaterThanOrEqual(0);
      expect(elasticsearchTook).toBeLessThanOrEqual(run.shares.embed + run.shares.search);
      // The server's first recalls, measured apart from the steady state.
      expect(run.coldStart.queries).toBe(10);
      expect(run.coldStart.max).toBeGreaterThanOrEqual(run.coldStart.p50);
      // The whole warm-up, its p50 per window of 500 (one, partial, here).
      expect(run.warmup).toMatchObject({ queries: 12, window: 500 });
      expect(run.warmup.p50s).toHaveLength(1);
      expect(run.warmup.p50s[0]).toBeGreaterThan(0);
      expect(run.elasticsearchUptimeMinutes).toBeGreaterThanOrEqual(0);
      expect(run.queryCacheHits).toBe(0);
    }
    expect(size.sequential.inFlight).toBe(1);
    expect(size.concurrent.inFlight).toBe(2);

    // Nothing of the bench is left on the cluster.
    const names = ['memories', 'episodes', 'turns'].map((t) => `${prefix}-200.engram-${t}`);
    for (const name of names) {
      expect(await es.indices.exists({ index: name })).toBe(false);
      expect(await es.indices.existsIndexTemplate({ name })).toBe(false);
    }

    const text = formatDistributedRecallBench(result);
    expect(text).toContain('recall (distributed, gRPC + Elasticsearch) at 200 memories');
    expect(text).toContain('targets p50 ≤ 15 ms, p99 ≤ 50 ms at 100,000 memories');
  });

  it('deletes its indices when the run fails', async () => {
    const failing = `${uniqueName('it-bench-recall-fail')}`;
    // A query model that crashes fails every Recall on the server after the corpus is indexed.
    const broken = {
      id: 'broken@1',
      dims: 384,
      embed: () => Promise.reject(new Error('model crashed')),
    };
    await expect(
      benchRecallDistributed({
        elasticsearchUrl: infra.elasticsearchUrl,
        sizes: [50],
        queries: 2,
        indexPrefix: failing,
        queryModel: broken,
        progress: false,
      }),
    ).rejects.toThrow();
    for (const tier of ['memories', 'episodes', 'turns']) {
      const name = `${failing}-50.engram-${tier}`;
      expect(await es.indices.exists({ index: name })).toBe(false);
      expect(await es.indices.existsIndexTemplate({ name })).toBe(false);
    }
  });
});
