import { OnnxMiniLmEmbedder, type Embedder } from '@engram/ai';
import type { Memory } from '@engram/contracts';
import { DEFAULT_RANKING_CONFIG, memoriesToReview, NO_PRUNE_CRITERIA } from '@engram/core';
import { createElasticsearchClient, retrievalIndexNames } from '@engram/elasticsearch';
import { KafkaEventLog } from '@engram/kafka';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  distributedMemoryLifecycle,
  memoryHistoryOnLog,
  storedMemories,
  type MemoryLifecycle,
} from '../../apps/engram/src/commands/memory-lifecycle';
import { pruneMemories } from '../../apps/engram/src/commands/memory-prune';
import { prefixedRetrievalTopics } from '../../apps/retrieval/src/retrieval-topics';
import type { RunningRetrieval } from '../../apps/retrieval/src/retrieval.topology';
import { startTestIndexer } from './support/retrieval-indexer';
import { memoryRecord, PROJECT, T0, TENANT } from '../../apps/retrieval/src/testing/records';
import { testKafka, testRegistry } from './support/kafka-fixtures';
import { eventually, uniqueName } from './support/unique';

// The memory lifecycle commands on the distributed stack (issue #20): `engram memory history`
// reads a memory's records on memory.memories.v1 from Kafka, `engram memory prune` selects from
// Elasticsearch and writes the pruned version and the tombstone (Feedback DELETE) to Kafka, the
// real retrieval indexer applies both, and `engram review`'s queue of needsReview memories is
// read from Elasticsearch and emptied by Feedback CONFIRM.

const PARTITIONS = 3;
const SCOPE = { tenantId: TENANT, projectId: PROJECT };
const MEMORIES: Memory[] = [
  memoryRecord({
    memoryId: 'lc-stale',
    content: 'The cookie parser lives in src/auth/cookies.ts',
    staleAt: T0,
  }),
  memoryRecord({
    memoryId: 'lc-verified',
    content: 'The billing cron must run before midnight UTC',
    staleAt: T0,
    userVerified: true,
  }),
  memoryRecord({
    memoryId: 'lc-review',
    content: 'Token refresh races the session cookie writer',
    needsReview: true,
  }),
  memoryRecord({ memoryId: 'lc-live', content: 'Postgres pool exhausted under load tests' }),
];

describe('engram memory history, prune and review on Kafka and Elasticsearch', () => {
  const infra = inject('infra');
  const es = createElasticsearchClient(infra.elasticsearchUrl);
  const prefix = `${uniqueName('it-lifecycle')}.`;
  const topics = prefixedRetrievalTopics(prefix);
  const indices = retrievalIndexNames(prefix);
  const events = new KafkaEventLog(testKafka(), testRegistry());
  let embedder: Embedder;
  let indexer: RunningRetrieval;
  let lifecycle: MemoryLifecycle;

  const exists = async (id: string) => {
    await es.indices.refresh({ index: indices.memories });
    return es.exists({ index: indices.memories, id });
  };

  beforeAll(async () => {
    embedder = await OnnxMiniLmEmbedder.load();
    await events.connect();
    await events.ensureTopic({ topic: topics.memories, partitions: PARTITIONS, compacted: true });
    lifecycle = distributedMemoryLifecycle({
      log: events,
      hasTopic: true,
      client: es,
      topicPrefix: prefix,
      embedder,
      ranking: DEFAULT_RANKING_CONFIG,
    });
    await events.publish(
      lifecycle.codec,
      MEMORIES.map((m) => ({ type: 'Memory' as const, ...m })),
    );
    indexer = await startTestIndexer({
      embedder,
      topics,
      indexPrefix: prefix,
      groupId: `${prefix}indexer`,
      partitions: PARTITIONS,
      retry: { initialMs: 100, maxMs: 1_000 },
      idleMerge: false,
    });
    await eventually(
      () => (indexer.indexer.counters.indexed >= MEMORIES.length ? true : undefined),
      { timeoutMs: 90_000 },
    );
    // Searches see what the indexer wrote once the index refreshes (every second by default).
    await es.indices.refresh({ index: indices.memories });
  }, 180_000);

  afterAll(async () => {
    await indexer?.stop();
    for (const index of Object.values(indices)) {
      await es.indices.delete({ index, ignore_unavailable: true });
      await es.indices.deleteIndexTemplate({ name: index }).catch(() => undefined);
    }
    await lifecycle?.close();
  });

  it('prune: the pruned version and the tombstone on Kafka, the document gone, history showing why', async () => {
    const before = await memoryHistoryOnLog(
      events,
      lifecycle.codec,
      'lc-stale',
      lifecycle.stack.store,
    );
    expect(before.map((e) => e.changes.map((c) => c.field))).toEqual([['created']]);
    expect(await lifecycle.tenantsWithProject(PROJECT)).toEqual([TENANT]);

    const request = {
      criteria: { ...NO_PRUNE_CRITERIA, stale: true },
      ...SCOPE,
      now: Date.now(),
    };
    const dry = await pruneMemories(lifecycle, { ...request, dryRun: true });
    expect(dry.map((o) => [o.memoryId, o.reason, o.status])).toEqual([
      ['lc-stale', 'stale', 'would prune'],
    ]);
    const pruned = await pruneMemories(lifecycle, { ...request, dryRun: false });
    expect(pruned.map((o) => [o.memoryId, o.status])).toEqual([['lc-stale', 'pruned']]);
    expect(await exists('lc-stale')).toBe(false);
    // The indexer applies the pruned version and then the tombstone: the document stays gone.
    await eventually(
      () => {
        const { deleted, alreadyAbsent } = indexer.indexer.counters;
        return deleted + alreadyAbsent >= 1 ? true : undefined;
      },
      { timeoutMs: 60_000 },
    );
    expect(await exists('lc-stale')).toBe(false);
    expect(await exists('lc-verified')).toBe(true);

    const history = await memoryHistoryOnLog(
      events,
      lifecycle.codec,
      'lc-stale',
      lifecycle.stack.store,
    );
    expect(history.map((e) => e.changes.map((c) => c.field))).toEqual([
      ['created'],
      ['tags'],
      ['deleted'],
    ]);
    expect(history[1].memory?.tags).toContain('pruned:stale');
    expect(history[2].reasons).toEqual(['deleted after pruning (stale)']);
    expect(await pruneMemories(lifecycle, { ...request, dryRun: true })).toEqual([]);
  });

  it('review: the needsReview memories from Elasticsearch, out of the queue once confirmed', async () => {
    const queued = async () => {
      await es.indices.refresh({ index: indices.memories });
      return memoriesToReview(await storedMemories(lifecycle.stack.store, SCOPE, null)).map(
        (m) => m.memoryId,
      );
    };
    expect(await queued()).toEqual(['lc-review']);
    const answer = await lifecycle.stack.feedback.feedback({
      ...SCOPE,
      memoryId: 'lc-review',
      action: 'confirm',
    });
    expect(answer).toMatchObject({ memoryId: 'lc-review', deleted: false, confidence: 0.9 });
    expect(await queued()).toEqual([]);
    const history = await memoryHistoryOnLog(events, lifecycle.codec, 'lc-review');
    expect(history.at(-1)?.reasons).toEqual(['confirmed by a person (feedback)']);
  });
});
