import { DEFAULT_RANKING_CONFIG } from '@engram/core';
// Feedback's deletions on the embedded stack, end to end: the SQLite event log, the embedded
// retrieval indexer consuming memory.memories.v1 (tombstones included) into the SQLite store, and
// the recall services on that store. DELETE and CORRECT-as-duplicate publish the memory's
// tombstone and take it out of the store at once; the indexer applies the tombstone after. A
// confidence change propagates along the memory's relations (issue #20).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Memory, Typed } from '@engram/contracts';
import {
  anyOfFilter,
  InvalidRecallRequestError,
  isLoggedTombstone,
  MisconfigurationError,
  partitionOfKey,
  type FeedbackInput,
} from '@engram/core';
import {
  EmbeddedStreamPlatform,
  SqliteEventLog,
  SqliteEventLogAdapter,
  SqliteRetrievalStore,
} from '@engram/embedded';
import { memoryFromSource, type MemoryDocument } from '@engram/core';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createRecallStack } from './retrieval-backend';
import { sqliteBackend } from './sqlite-backend';
import { LEXICAL_ONLY_EMBEDDER } from './retrieval-embedders';
import { startRetrievalWithRecall, type RetrievalWithRecall } from './retrieval.topology';
import { prefixedRecordCodec, publishRecordsTo, publishTombstonesTo } from './record-publisher';
import type { RecallStack } from './recall-stack';
import { memoryRecord, PROJECT, TENANT } from './testing/records';

const PARTITIONS = 2;
const TOPIC = 'memory.memories.v1';
const CODEC = prefixedRecordCodec('', { type: 'Memory' } as Typed);

/** The indexer and recall on a SQLite store in `dataDir`, fed from the log; `stop` closes the store. */
async function startSqliteRetrieval(
  log: SqliteEventLog,
  dataDir: string,
  groupId?: string,
): Promise<RetrievalWithRecall & { store: SqliteRetrievalStore }> {
  const store = SqliteRetrievalStore.open({ dataDir });
  const running = await startRetrievalWithRecall({
    platform: new EmbeddedStreamPlatform(log),
    backend: sqliteBackend(store),
    ranking: DEFAULT_RANKING_CONFIG,
    embedder: LEXICAL_ONLY_EMBEDDER,
    partitions: PARTITIONS,
    ...(groupId !== undefined && { groupId }),
    retry: { initialMs: 10, maxMs: 50 },
  });
  return {
    ...running,
    store,
    async stop() {
      await running.stop();
      store.close();
    },
  };
}

const MEMORIES: Memory[] = [
  memoryRecord({ memoryId: 'm-mutex', content: 'Token refresh must hold the session mutex' }),
  memoryRecord({ memoryId: 'm-mutex-again', content: 'Refresh the token only under the mutex' }),
  memoryRecord({ memoryId: 'm-pool', content: 'Postgres pool exhausted under load tests' }),
  memoryRecord({
    memoryId: 'm-other-project',
    projectId: 'acme/web',
    content: 'Checkout grid collapses on phones',
  }),
];

describe('FeedbackService deletions on the embedded log and store', () => {
  let dir: string;
  let log: SqliteEventLog;
  let events: SqliteEventLogAdapter;
  let retrieval: Awaited<ReturnType<typeof startSqliteRetrieval>>;
  let stack: RecallStack;
  let stopped: Promise<void> | undefined;
  const stopRetrieval = () => (stopped ??= retrieval.stop());

  const recalled = async (query: string, projectId = PROJECT): Promise<string[]> => {
    const answer = await stack.service.recall({
      tenantId: TENANT,
      projectId,
      query,
      tier: 'memories',
    });
    return answer.results.flatMap((hit) =>
      hit.tier === 'memories' ? [hit.memory.memory.memoryId] : [],
    );
  };
  const feedback = (input: Partial<FeedbackInput>) =>
    stack.feedback.feedback({
      tenantId: TENANT,
      projectId: PROJECT,
      memoryId: '',
      action: '',
      ...input,
    });
  /** The keys of the tombstones on the memories topic. */
  const tombstones = async (): Promise<string[]> => {
    const keys: string[] = [];
    for (let partition = 0; partition < PARTITIONS; partition += 1) {
      const items = await events.read(CODEC, partition, 0, 1_000, { tombstones: true });
      for (const item of items) if (isLoggedTombstone(item)) keys.push(item.key);
    }
    return keys;
  };
  /** Waits until the indexer has handled every record on the memories topic. */
  const indexed = async () => {
    const total = (await events.endOffsets(TOPIC)).reduce((a, b) => a + b, 0);
    await vi.waitFor(() => expect(retrieval.consumer.counters.processed).toBe(total), {
      timeout: 5_000,
    });
  };

  beforeEach(async () => {
    stopped = undefined;
    dir = mkdtempSync(join(tmpdir(), 'engram-feedback-'));
    log = SqliteEventLog.open({ dataDir: dir });
    events = new SqliteEventLogAdapter(log);
    retrieval = await startSqliteRetrieval(log, dir);
    stack = createRecallStack({
      ranking: DEFAULT_RANKING_CONFIG,
      backend: sqliteBackend(retrieval.store),
      embedder: LEXICAL_ONLY_EMBEDDER,
      publish: publishRecordsTo(events, ''),
      publishTombstones: publishTombstonesTo(events, ''),
    });
    await events.publish(
      CODEC,
      MEMORIES.map((m) => ({ type: 'Memory', ...m })),
    );
    await indexed();
  });

  afterEach(async () => {
    await stack.access.close();
    await stopRetrieval();
    log.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('DELETE: a tombstone on the memory partition, out of recall at once, and after the indexer', async () => {
    expect(await recalled('session mutex')).toContain('m-mutex');
    // With the indexer paused, only Feedback itself can take the memory out of the store.
    await retrieval.consumer.stop();
    const answer = await feedback({ memoryId: 'm-mutex', action: 'delete', userId: 'alice' });
    expect(answer).toEqual({ memoryId: 'm-mutex', applied: true, confidence: 0, deleted: true });
    expect(await recalled('session mutex')).not.toContain('m-mutex');

    // The tombstone is the last record of the memory's partition, after the memory itself.
    const partition = partitionOfKey('m-mutex', PARTITIONS);
    const items = await events.read(CODEC, partition, 0, 1_000, { tombstones: true });
    expect(items.at(-1)).toMatchObject({ event: null, key: 'm-mutex' });
    expect(await tombstones()).toEqual(['m-mutex']);
    // The indexer gets it when it resumes, and finds the document already gone.
    await retrieval.consumer.start();
    await indexed();
    expect(retrieval.indexer.counters).toMatchObject({ deleted: 0, alreadyAbsent: 1 });
    expect(await recalled('session mutex')).not.toContain('m-mutex');
    expect(await recalled('Postgres pool')).toEqual(['m-pool']);
  });

  it('DELETE again: not found, and no second tombstone', async () => {
    await feedback({ memoryId: 'm-pool', action: 'delete' });
    await expect(feedback({ memoryId: 'm-pool', action: 'delete' })).rejects.toThrow(
      new InvalidRecallRequestError('memoryId', 'no memory m-pool in this project'),
    );
    expect(await tombstones()).toEqual(['m-pool']);
  });

  it('CORRECT as a duplicate: deletes the copy, keeps the memory it repeats', async () => {
    const answer = await feedback({
      memoryId: 'm-mutex-again',
      action: 'correct',
      reason: 'duplicate',
      duplicateOfMemoryId: 'm-mutex',
    });
    expect(answer).toMatchObject({ memoryId: 'm-mutex-again', deleted: true });
    const left = await recalled('mutex token refresh');
    expect(left).toContain('m-mutex');
    expect(left).not.toContain('m-mutex-again');
    expect(await tombstones()).toEqual(['m-mutex-again']);
  });

  it('should delete nothing of another project, nor as a duplicate of what the project lacks', async () => {
    const ends = await events.endOffsets(TOPIC);
    await expect(feedback({ memoryId: 'm-other-project', action: 'delete' })).rejects.toThrow(
      new InvalidRecallRequestError('memoryId', 'no memory m-other-project in this project'),
    );
    await expect(
      feedback({ tenantId: 'globex', memoryId: 'm-pool', action: 'delete' }),
    ).rejects.toThrow(InvalidRecallRequestError);
    const duplicateOfForeign = feedback({
      memoryId: 'm-mutex-again',
      action: 'correct',
      reason: 'duplicate',
      duplicateOfMemoryId: 'm-other-project',
    });
    await expect(duplicateOfForeign).rejects.toMatchObject({ field: 'duplicateOfMemoryId' });
    expect(await events.endOffsets(TOPIC)).toEqual(ends);
    expect(await recalled('Checkout grid', 'acme/web')).toEqual(['m-other-project']);
    expect(await recalled('mutex token refresh')).toContain('m-mutex-again');
  });

  it('should leave the store alone when the tombstone cannot be written (the log first)', async () => {
    const failing = createRecallStack({
      ranking: DEFAULT_RANKING_CONFIG,
      backend: sqliteBackend(retrieval.store),
      embedder: LEXICAL_ONLY_EMBEDDER,
      publish: publishRecordsTo(events, ''),
      publishTombstones: () => Promise.reject(new Error('log down')),
    });
    await expect(
      failing.feedback.feedback({
        tenantId: TENANT,
        projectId: PROJECT,
        memoryId: 'm-pool',
        action: 'delete',
      }),
    ).rejects.toThrow('log down');
    await failing.access.close();
    expect(await recalled('Postgres pool')).toEqual(['m-pool']);
  });

  it('should refuse to delete, saying why, on a server without tombstones', async () => {
    const readOnly = createRecallStack({
      ranking: DEFAULT_RANKING_CONFIG,
      backend: sqliteBackend(retrieval.store),
      embedder: LEXICAL_ONLY_EMBEDDER,
      publish: publishRecordsTo(events, ''),
    });
    await expect(
      readOnly.feedback.feedback({
        tenantId: TENANT,
        projectId: PROJECT,
        memoryId: 'm-pool',
        action: 'delete',
      }),
    ).rejects.toThrow(MisconfigurationError);
    await readOnly.access.close();
    expect(await recalled('Postgres pool')).toEqual(['m-pool']);
  });

  it("FLAG WRONG: the memories its relations reach move with it, by the seed's coefficients", async () => {
    const related = (
      memoryId: string,
      content: string,
      confidence: number,
      relations: [Memory['relations'][number]['relationType'], string][],
    ) =>
      memoryRecord({
        memoryId,
        memoryType: 'decision',
        content,
        confidence,
        relations: relations.map(([relationType, targetMemoryId]) => ({
          relationType,
          targetMemoryId,
          targetFilePath: null,
          confidence: 1,
          autoExtracted: true,
        })),
      });
    const graph = [
      related('m-rule', 'Invoices are numbered per tenant', 0.9, [
        ['validates', 'm-evidence'],
        ['conflicts_with', 'm-rival'],
      ]),
      related('m-evidence', 'Invoice numbers restart every fiscal year', 0.8, [
        ['derived_from', 'm-source'],
        ['validates', 'm-rule'], // a cycle back: the flagged memory keeps its new confidence
      ]),
      related('m-rival', 'One global sequence numbers every invoice', 0.5, []),
      related('m-source', 'The fiscal year starts in April for accounting', 0.7, []),
    ];
    await events.publish(
      CODEC,
      graph.map((m) => ({ type: 'Memory', ...m })),
    );
    await indexed();
    const answer = await feedback({ memoryId: 'm-rule', action: 'flag_wrong' });
    expect(answer.confidence).toBeCloseTo(0.45, 10);
    // Δ −0.45: validates 0.6 → −0.27, conflicts_with −0.4 → +0.18, then derived_from 0.5 of
    // −0.27 → −0.135.
    const expected = { 'm-evidence': 0.53, 'm-rival': 0.68, 'm-source': 0.565 };
    const records = (await events.read(CODEC, 0, 0, 1_000)).concat(
      await events.read(CODEC, 1, 0, 1_000),
    );
    const latest = new Map(
      records.map(({ event }) => [(event as Memory).memoryId, (event as Memory).confidence]),
    );
    const stored = await stack.store.list<MemoryDocument>('memories', {
      scope: { tenantId: TENANT, projectId: PROJECT },
      filter: [anyOfFilter('memoryId', Object.keys(expected))],
      size: 3,
    });
    for (const [memoryId, confidence] of Object.entries(expected)) {
      expect(latest.get(memoryId)).toBeCloseTo(confidence, 10);
      const doc = stored.find((d) => d.source.memoryId === memoryId);
      expect(memoryFromSource(doc!.source).confidence).toBeCloseTo(confidence, 10);
    }
    expect(latest.get('m-rule')).toBeCloseTo(0.45, 10);
  });

  it('should stay deleted when the store is rebuilt from the log', async () => {
    await feedback({ memoryId: 'm-mutex', action: 'delete' });
    await stopRetrieval();
    const rebuilt = await startSqliteRetrieval(log, join(dir, 'rebuilt'), 'rebuild');
    try {
      const total = (await events.endOffsets(TOPIC)).reduce((a, b) => a + b, 0);
      await vi.waitFor(() => expect(rebuilt.consumer.counters.processed).toBe(total), {
        timeout: 5_000,
      });
      const answer = await rebuilt.recall.service.recall({
        tenantId: TENANT,
        projectId: PROJECT,
        query: 'mutex token refresh',
        tier: 'memories',
      });
      const ids = answer.results.flatMap((hit) =>
        hit.tier === 'memories' ? [hit.memory.memory.memoryId] : [],
      );
      expect(ids).toEqual(['m-mutex-again']);
    } finally {
      await rebuilt.stop();
    }
  });
});
