import { DEFAULT_RANKING_CONFIG } from '@engram/core';
import { OnnxMiniLmEmbedder, type Embedder } from '@engram/ai';
import type { Memory, Typed } from '@engram/contracts';
import { InvalidRecallRequestError, isLoggedTombstone, partitionOfKey } from '@engram/core';
import { createElasticsearchClient, retrievalIndexNames } from '@engram/elasticsearch';
import { KafkaEventLog } from '@engram/kafka';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createRecallStack } from '../../apps/retrieval/src/retrieval-backend';
import { elasticsearchBackend } from '../../apps/retrieval/src/elasticsearch-retrieval';
import type { RecallStack } from '../../apps/retrieval/src/recall-stack';
import {
  prefixedRecordCodec,
  publishRecordsTo,
  publishTombstonesTo,
} from '../../apps/retrieval/src/record-publisher';
import { prefixedRetrievalTopics } from '../../apps/retrieval/src/retrieval-topics';
import type { RunningRetrieval } from '../../apps/retrieval/src/retrieval.topology';
import { startTestIndexer } from './support/retrieval-indexer';
import { memoryRecord, PROJECT, TENANT } from '../../apps/retrieval/src/testing/records';
import { testKafka, testRegistry } from './support/kafka-fixtures';
import { eventually, uniqueName } from './support/unique';

// Feedback's deletions on the distributed stack: the tombstone goes through the EventLogPort
// (KafkaEventLog) onto memory.memories.v1, the real retrieval indexer (ReliableConsumer with
// tombstones, Schema Registry, real MiniLM) consumes it, and the document is gone from the
// engram-memories index — at once through Feedback, and for good through the indexer.

const PARTITIONS = 3;
const MEMORIES: Memory[] = [
  memoryRecord({ memoryId: 'fd-mutex', content: 'Token refresh must hold the session mutex' }),
  memoryRecord({ memoryId: 'fd-mutex-copy', content: 'Refresh tokens only under the mutex' }),
  memoryRecord({ memoryId: 'fd-pool', content: 'Postgres pool exhausted under load tests' }),
  memoryRecord({ memoryId: 'fd-flaky', content: 'The e2e checkout test is flaky on CI' }),
];

describe('Feedback deletions on real Kafka, Schema Registry and Elasticsearch', () => {
  const infra = inject('infra');
  const es = createElasticsearchClient(infra.elasticsearchUrl);
  const prefix = `${uniqueName('it-feedback')}.`;
  const topics = prefixedRetrievalTopics(prefix);
  const indices = retrievalIndexNames(prefix);
  const codec = prefixedRecordCodec(prefix, { type: 'Memory' } as Typed);
  const events = new KafkaEventLog(testKafka(), testRegistry());
  let embedder: Embedder;
  let indexer: RunningRetrieval;
  let stack: RecallStack;

  const exists = (id: string) => es.exists({ index: indices.memories, id });
  /** Resolves once the indexer has applied `count` deletions (found or already gone). */
  const deletionsApplied = (count: number) =>
    eventually(
      () => {
        const { deleted, alreadyAbsent } = indexer.indexer.counters;
        return deleted + alreadyAbsent >= count ? true : undefined;
      },
      { timeoutMs: 60_000 },
    );
  const feedback = (memoryId: string, extra: object = {}) =>
    stack.feedback.feedback({
      tenantId: TENANT,
      projectId: PROJECT,
      memoryId,
      action: 'delete',
      ...extra,
    });

  beforeAll(async () => {
    embedder = await OnnxMiniLmEmbedder.load();
    await events.connect();
    await events.ensureTopic({ topic: topics.memories, partitions: PARTITIONS, compacted: true });
    await events.publish(
      codec,
      MEMORIES.map((m) => ({ type: 'Memory', ...m })),
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
      {
        timeoutMs: 90_000,
      },
    );
    stack = createRecallStack({
      ranking: DEFAULT_RANKING_CONFIG,
      backend: elasticsearchBackend(es, indices),
      embedder,
      publish: publishRecordsTo(events, prefix),
      publishTombstones: publishTombstonesTo(events, prefix),
    });
  }, 180_000);

  afterAll(async () => {
    await stack?.access.close();
    await indexer?.stop();
    await events.disconnect();
    for (const index of Object.values(indices)) {
      await es.indices.delete({ index, ignore_unavailable: true });
      await es.indices.deleteIndexTemplate({ name: index }).catch(() => undefined);
    }
    await es.close();
  });

  it('should delete a memory from engram-memories when its tombstone reaches the indexer', async () => {
    expect(await exists('fd-flaky')).toBe(true);
    // Straight through the port, no Feedback: only the indexer can delete the document.
    await events.publishTombstones(topics.memories, ['fd-flaky']);
    await deletionsApplied(1);
    expect(indexer.indexer.counters.deleted).toBe(1);
    await es.indices.refresh({ index: indices.memories });
    expect(await exists('fd-flaky')).toBe(false);
  });

  it('Feedback DELETE: a tombstone on the memory partition, the document gone at once and for good', async () => {
    const before = indexer.indexer.counters.deleted + indexer.indexer.counters.alreadyAbsent;
    // It was returned once: its access counter exists, apart from the memory document.
    stack.access.record([{ tenantId: TENANT, projectId: PROJECT, memoryId: 'fd-mutex' }]);
    await stack.access.flush();
    const counter = () => es.exists({ index: indices.memoryAccess, id: 'fd-mutex' });
    expect(await counter()).toBe(true);
    const answer = await feedback('fd-mutex', { userId: 'alice' });
    expect(answer).toEqual({ memoryId: 'fd-mutex', applied: true, confidence: 0, deleted: true });
    // At once: Feedback removes it and refreshes (recall-rpcs.test checks it with no indexer),
    // and its counter with it.
    expect(await exists('fd-mutex')).toBe(false);
    expect(await counter()).toBe(false);
    const recalled = await stack.service.recall({
      tenantId: TENANT,
      projectId: PROJECT,
      query: 'session mutex token refresh',
      tier: 'memories',
    });
    const ids = recalled.results.flatMap((h) =>
      h.tier === 'memories' ? [h.memory.memory.memoryId] : [],
    );
    expect(ids).not.toContain('fd-mutex');
    expect(ids).toContain('fd-mutex-copy');

    const partition = partitionOfKey('fd-mutex', PARTITIONS);
    const [end] = (await events.endOffsets(topics.memories)).slice(partition, partition + 1);
    const items = await events.read(codec, partition, 0, end, { tombstones: true });
    const last = items.at(-1)!;
    expect(isLoggedTombstone(last) && last.key).toBe('fd-mutex');
    // The indexer applies the same tombstone later: the document stays gone.
    await deletionsApplied(before + 1);
    await es.indices.refresh({ index: indices.memories });
    expect(await exists('fd-mutex')).toBe(false);

    await expect(feedback('fd-mutex')).rejects.toThrow(InvalidRecallRequestError);
  });

  it('Feedback CORRECT as a duplicate deletes the copy and keeps the original', async () => {
    const answer = await feedback('fd-mutex-copy', {
      action: 'correct',
      reason: 'duplicate',
      duplicateOfMemoryId: 'fd-pool',
    });
    expect(answer.deleted).toBe(true);
    expect(await exists('fd-mutex-copy')).toBe(false);
    expect(await exists('fd-pool')).toBe(true);
    const tombstones: string[] = [];
    const ends = await events.endOffsets(topics.memories);
    for (let partition = 0; partition < PARTITIONS; partition += 1) {
      if (ends[partition] === 0) continue;
      const items = await events.read(codec, partition, 0, ends[partition], { tombstones: true });
      for (const item of items) if (isLoggedTombstone(item)) tombstones.push(item.key);
    }
    expect(tombstones.sort()).toEqual(['fd-flaky', 'fd-mutex', 'fd-mutex-copy']);
  });
});
