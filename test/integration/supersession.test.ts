import { OnnxMiniLmEmbedder, type Embedder } from '@engram/ai';
import type { Memory } from '@engram/contracts';
import {
  DEFAULT_RANKING_CONFIG,
  parseRememberRequest,
  rememberRequestedEvent,
  SUPERSEDED_BY_TAG,
  SUPERSEDED_PREFIX,
  memoryFromSource,
  userTaughtMemory,
  type MemoryDocument,
  type RankedMemory,
  type ReplacedMemory,
} from '@engram/core';
import {
  BulkWriter,
  createElasticsearchClient,
  elasticsearchStoreWriter,
  ensureRetrievalIndices,
  retrievalIndexNames,
} from '@engram/elasticsearch';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createRecallStack } from '../../apps/retrieval/src/retrieval-backend';
import { elasticsearchBackend } from '../../apps/retrieval/src/elasticsearch-retrieval';
import type { RecallStack } from '../../apps/retrieval/src/recall-stack';
import { elasticsearchRecallStore } from '../../apps/retrieval/src/recall-store';
import { RetrievalIndexer } from '../../apps/retrieval/src/retrieval-indexer';
import { supersessionCandidatesIn } from '../../apps/retrieval/src/supersession-index';
import { delivered } from '../../apps/retrieval/src/testing/records';
import { uniqueName } from './support/unique';

// Issue #20, supersession and the stale guard on Elasticsearch with the real MiniLM model: the
// retrieval indexer resolves each memory against the project's memories in the index (the same
// `withSupersession` the distributed indexer runs), then Recall, InjectForFile and BuildContext
// read the index. The old fact is shown by an explicit search only, as the history of the fact
// that replaced it (folded under it, marked `[SUPERSEDED …]` and penalised), never as a result of
// its own; it is never injected. The embedded twin is
// apps/engram/src/supersession.embedded.spec.ts.

const DAY = 86_400_000;
const NOW = Date.now();
const EXPORT_FILE = 'src/refunds/export.ts';

describe('supersession, Elasticsearch', () => {
  const infra = inject('infra');
  const es = createElasticsearchClient(infra.elasticsearchUrl);
  const prefix = `${uniqueName('it-supersede')}.`;
  const indices = retrievalIndexNames(prefix);
  const scope = { tenantId: 'acme', projectId: uniqueName('acme/checkout') };
  const taught = (text: string, type: string, relatedFiles: string[], at: number): Memory => {
    const request = parseRememberRequest({ ...scope, userId: 'dana', text, type, relatedFiles });
    // A person's lesson, proven enough to be injected (InjectForFile wants two returns).
    return { ...userTaughtMemory(request, rememberRequestedEvent(request, at)), accessCount: 2 };
  };
  // Two facts, each replaced later by a note that says so: [text, type, files, days ago].
  const notes: [string, string, string[], number][] = [
    ['Checkout talks to payments over a shared Postgres table', 'decision', [], 90],
    [
      'Checkout no longer talks to payments over the shared Postgres table; it calls the ' +
        'payments gRPC API instead',
      'decision',
      [],
      1,
    ],
    [
      'Refund export must run after the nightly ledger close or totals are counted twice',
      'gotcha',
      [EXPORT_FILE],
      80,
    ],
    [
      'Refund export no longer waits for the nightly ledger close: totals are computed per ' +
        'transaction',
      'gotcha',
      [EXPORT_FILE],
      1,
    ],
  ];
  const [table, api, afterClose, perTransaction] = notes.map(([text, type, files, daysAgo]) =>
    taught(text, type, files, NOW - daysAgo * DAY),
  );

  let embedder: Embedder;
  let indexer: RetrievalIndexer;
  let stack: RecallStack;

  const index = async (...memories: Memory[]) => {
    await indexer.handleMemories(memories.map((m) => delivered(m, { key: m.memoryId })));
    await es.indices.refresh({ index: indices.memories });
  };
  /** The results, each with the outdated memories folded under it. */
  const recall = async (
    query: string,
  ): Promise<(RankedMemory & { replaces: ReplacedMemory[] })[]> => {
    const { results } = await stack.service.recall({
      ...scope,
      query,
      tier: 'memories',
      k: 5,
      track: false,
    });
    return results.flatMap((hit) =>
      hit.tier === 'memories' ? [{ ...hit.memory, replaces: hit.replaces ?? [] }] : [],
    );
  };
  /** The memory as the index stores it. */
  const stored = async (memoryId: string): Promise<Memory> => {
    const listed = await elasticsearchRecallStore(es, indices).list<MemoryDocument>('memories', {
      scope,
      filter: [],
      size: 100,
    });
    return memoryFromSource(listed.find((doc) => doc.id === memoryId)!.source);
  };
  const injected = async (filePath: string) =>
    (await stack.context.injectForFile({ ...scope, filePath })).memories.map(
      (m) => m.memory.memoryId,
    );

  beforeAll(async () => {
    embedder = await OnnxMiniLmEmbedder.load();
    await ensureRetrievalIndices(es, indices, { dims: embedder.dims });
    indexer = new RetrievalIndexer(
      embedder,
      elasticsearchStoreWriter(BulkWriter.forClient(es), indices),
      supersessionCandidatesIn(elasticsearchRecallStore(es, indices)),
    );
    stack = createRecallStack({
      ranking: DEFAULT_RANKING_CONFIG,
      backend: elasticsearchBackend(es, indices),
      embedder,
      publish: () => Promise.resolve(), // no log: only Remember's own write reaches the index
    });
    await index(table, afterClose);
  }, 120_000);

  afterAll(async () => {
    await stack?.access.close();
    for (const name of Object.values(indices)) {
      await es.indices.delete({ index: name, ignore_unavailable: true });
      await es.indices.deleteIndexTemplate({ name }).catch(() => undefined);
    }
    await es.close();
  });

  it('should inject the old gotcha and recall the old decision as current before the change', async () => {
    expect(await injected(EXPORT_FILE)).toEqual([afterClose.memoryId]);
    const [first] = await recall('how does checkout talk to payments');
    expect(first.memory.memoryId).toBe(table.memoryId);
    expect(first.stale).toBe(false);
  });

  it("should show the superseded fact marked and penalised as its successor's history, never inject it", async () => {
    await index(api, perTransaction);
    // Also asked in the old fact's own words, which it matches best: the current fact takes its
    // slot, with the old one folded under it.
    for (const query of [
      'how does checkout talk to payments',
      'checkout talks to payments over a shared Postgres table',
    ]) {
      const results = await recall(query);
      const ids = results.map((m) => m.memory.memoryId);
      expect(ids.indexOf(api.memoryId)).toBe(0);
      expect(ids).not.toContain(table.memoryId);
      expect(results[0].replaces).toEqual([
        {
          memoryId: table.memoryId,
          content: `${SUPERSEDED_PREFIX} ${table.content}`,
          confidence: expect.closeTo(table.confidence * 0.5, 10) as number,
          reason: 'superseded',
        },
      ]);
    }
    const old = await stored(table.memoryId);
    expect(old.tags).toContain(SUPERSEDED_BY_TAG + api.memoryId);
    expect(old.staleAt).toBe(api.createdAt);
    expect(await injected(EXPORT_FILE)).toEqual([perTransaction.memoryId]);
    const context = await stack.context.buildContext({
      ...scope,
      sessionId: 'session-2',
      query: 'how does checkout talk to payments, and when does refund export run',
    });
    expect(context.rendered).toContain(api.content);
    expect(context.rendered).not.toContain(table.content);
    expect(context.rendered).not.toContain(afterClose.content);
  });

  it("should demote at once the fact a person's Remember contradicts, before any consumer", async () => {
    const file = 'src/refunds/webhook.ts';
    const teach = (text: string) =>
      stack.remember.remember({
        ...scope,
        userId: 'dana',
        text,
        type: 'gotcha',
        relatedFiles: [file],
      });
    const old = await teach(
      'Refund webhooks must be acknowledged within five seconds or Stripe retries',
    );
    const current = await teach(
      'Refund webhooks no longer need a five second acknowledgement: the queue acknowledges them',
    );
    expect(await injected(file)).toEqual([current.memoryId]);
    const [first] = await recall('refund webhooks acknowledged within five seconds');
    expect(first.memory.memoryId).toBe(current.memoryId);
    expect(first.replaces.map((r) => [r.memoryId, r.reason])).toEqual([
      [old.memoryId, 'superseded'],
    ]);
    expect(first.replaces[0].content.startsWith(SUPERSEDED_PREFIX)).toBe(true);
  });
});
