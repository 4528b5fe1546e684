import type { Embedder } from '@engram/ai';
import {
  anyOfFilter,
  InvalidRecallRequestError,
  type AccessHit,
  type StoreCandidateQuery,
  type StoreCandidates,
} from '@engram/core';
import {
  episodeDocument,
  memoryDocument,
  turnDocument,
  withEmbedding,
  type SearchFields,
} from '@engram/core';
import { modelVector, type RecallTier } from '@engram/core';
import { describe, expect, it } from 'vitest';
import type { AccessTracker } from './access-tracker';
import type { RecallStore } from './recall-store';
import { candidatesPerList, DEFAULT_MIN_KNN_SIMILARITY, RecallService } from './recall.service';
import { episodeRecord, memoryRecord, PROJECT, promptRecord, T0, TENANT } from './testing/records';

const MODEL = 'fake@1';
const NOW = T0 + 60_000;

/** Two-word vocabulary: texts about auth point one way, about css the other. */
const fakeEmbedder: Embedder & { calls: number } = {
  id: MODEL,
  dims: 2,
  calls: 0,
  embed(texts) {
    this.calls += 1;
    return Promise.resolve(
      texts.map((text) => new Float32Array(/auth|token/i.test(text) ? [1, 0] : [0, 1])),
    );
  },
};

function withVector<D extends SearchFields>(doc: { id: string; body: D }, vector: number[]) {
  return { id: doc.id, body: withEmbedding(doc.body, modelVector(MODEL, vector)) };
}

const DOCS = {
  memories: [
    withVector(
      memoryDocument(
        memoryRecord({
          memoryId: 'm-auth',
          memoryType: 'gotcha',
          content: 'the auth token refresh must hold the session mutex',
        }),
      ),
      [1, 0],
    ),
    withVector(memoryDocument(memoryRecord({ memoryId: 'm-css', memoryType: 'decision' })), [0, 1]),
  ],
  episodes: [withVector(episodeDocument(episodeRecord({ episodeId: 'e-auth' })), [1, 0])],
  turns: [withVector(turnDocument(promptRecord({ eventId: 'p-auth', text: 'auth' }))!, [1, 0])],
};

class FakeStore implements RecallStore {
  readonly queries: { tier: RecallTier; query: StoreCandidateQuery }[] = [];
  readonly sessionsAsked: number[] = [];

  constructor(private readonly docs: typeof DOCS = DOCS) {}

  candidates<S>(tier: RecallTier, query: StoreCandidateQuery): Promise<StoreCandidates<S>> {
    this.queries.push({ tier, query });
    const docs = this.docs[tier];
    const bm25 = query.text === null ? [] : docs.slice(0, 1);
    const knn = query.vector === null ? [] : docs;
    return Promise.resolve({
      bm25: bm25.map((doc) => ({ id: doc.id, score: 2 })),
      knn: query.vector === null ? null : knn.map((doc, i) => ({ id: doc.id, score: 1 - i / 10 })),
      sources: new Map([...bm25, ...knn].map((doc) => [doc.id, doc.body as S])),
    });
  }

  episodesOfTurns(_scope: unknown, eventIds: string[]) {
    return Promise.resolve(new Map(eventIds.map((id) => [id, [`episode-of-${id}`]])));
  }

  recentSessions(_scope: unknown, n: number) {
    this.sessionsAsked.push(n);
    return Promise.resolve([{ sessionId: 'session-1', lastActivityAt: T0 }]);
  }

  writeAccess() {
    return Promise.resolve({ failed: [] });
  }

  list() {
    return Promise.resolve([]);
  }
}

function service(store = new FakeStore(), recorded: AccessHit[][] = []) {
  const access = { record: (hits: AccessHit[]) => recorded.push(hits) } as unknown as AccessTracker;
  return new RecallService(store, fakeEmbedder, { clock: () => NOW, access });
}

const BASE = { tenantId: TENANT, projectId: PROJECT, query: 'auth token' };

describe('RecallService', () => {
  it('should rank each tier with the core and merge them, each result explained and traced', async () => {
    const recorded: AccessHit[][] = [];
    const answer = await service(new FakeStore(), recorded).recall({ ...BASE, phase: 'implement' });
    expect(answer.embeddingModel).toBe(MODEL);
    expect(answer.query.tiers).toEqual(['memories', 'episodes', 'turns']);
    const top = answer.results[0];
    expect(top).toMatchObject({ tier: 'memories', id: 'm-auth' });
    expect(top.score).toMatchObject({ bm25Rank: 1, knnRank: 1, knn: 1, phaseWeight: 1.5 });
    // relevance dominates; the phase weight is damped (1.5^0.25), and the relevance is the one
    // scale of every tier: the rank fusion with the share of the query's words the text holds
    expect(top.explanation).toMatch(/^final .* phase 1\.1067 \(implement\/gotcha 1\.50, damped\)/);
    expect(top.explanation).toContain('query-term coverage 1.0000');
    expect(top.provenance).toMatchObject({ tenantId: TENANT, memoryId: 'm-auth' });
    expect(answer.results.map((r) => r.id)).toEqual(
      expect.arrayContaining(['e-auth', 'p-auth', 'm-css']),
    );
    // A turn's episode comes from the episodes that list it.
    expect(answer.results.find((r) => r.id === 'p-auth')?.provenance).toMatchObject({
      episodeIds: ['episode-of-p-auth'],
      eventIds: ['p-auth'],
    });
    // Only memories are access-tracked, once per recall, with the counts they were read with.
    expect(recorded).toEqual([
      answer.results.flatMap((r) =>
        r.tier === 'memories'
          ? [
              {
                tenantId: TENANT,
                projectId: PROJECT,
                memoryId: r.id,
                seen: {
                  accessCount: r.memory.memory.accessCount,
                  lastAccessedAt: r.memory.memory.lastAccessedAt,
                },
              },
            ]
          : [],
      ),
    ]);
  });

  it('should ask the store for scoped, same-model candidates with an over-fetch and a floor', async () => {
    const store = new FakeStore();
    await service(store).recall({ ...BASE, tier: 'memories', k: 5, memoryTypes: ['gotcha'] });
    // BM25 with the text alone, then kNN with the vector alone, under the same filters.
    expect(store.queries.map(({ tier }) => tier)).toEqual(['memories', 'memories']);
    const [lexical, semantic] = store.queries.map(({ query }) => query);
    const common = { size: candidatesPerList(5), minSimilarity: DEFAULT_MIN_KNN_SIMILARITY };
    expect(lexical).toMatchObject({ ...common, text: 'auth token', vector: null });
    expect(semantic).toMatchObject({
      ...common,
      text: null,
      vector: { model: MODEL, dimension: 2 },
    });
    expect(semantic.filter).toEqual(lexical.filter);
    expect(semantic.scope).toEqual(lexical.scope);
    expect(lexical.scope).toEqual({ tenantId: TENANT, projectId: PROJECT });
    expect(lexical.filter).toEqual(expect.arrayContaining([anyOfFilter('memoryType', ['gotcha'])]));
  });

  it('should ask for the BM25 candidates before the query is embedded', async () => {
    const store = new FakeStore();
    const askedWhenEmbedding: number[] = [];
    const embedder: Embedder = {
      ...fakeEmbedder,
      embed(texts) {
        askedWhenEmbedding.push(store.queries.length);
        return fakeEmbedder.embed(texts);
      },
    };
    const recall = new RecallService(store, embedder, { clock: () => NOW });
    const answer = await recall.recall({ ...BASE, tier: 'memories' });
    expect(askedWhenEmbedding).toEqual([1]);
    expect(store.queries[0].query.vector).toBeNull();
    // Both lists reach the ranking: m-auth by BM25 and kNN, m-css by kNN alone.
    expect(answer.results.map((r) => [r.id, r.score.bm25Rank, r.score.knnRank])).toEqual([
      ['m-auth', 1, 1],
      ['m-css', 0, 2], // rank 0: not in that list
    ]);
  });

  it('should show a superseded memory prefixed and penalised, as the history of its successor', async () => {
    // The old statement matches the query best (first in both lists): it does not take a slot of
    // its own, its successor (found by kNN alone) takes it, with the old one as its history.
    const superseded = memoryRecord({
      memoryId: 'm-old',
      content: 'the auth token refresh must hold the session mutex',
      tags: ['superseded-by:m-new'],
      staleAt: T0,
    });
    const successor = memoryRecord({
      memoryId: 'm-new',
      createdAt: T0,
      content: 'refreshing no longer needs the mutex: the queue runs it once at a time',
      relations: [
        {
          targetMemoryId: 'm-old',
          targetFilePath: null,
          relationType: 'supersedes',
          confidence: 0.8,
          autoExtracted: true,
        },
      ],
    });
    const store = new FakeStore({
      ...DOCS,
      memories: [
        withVector(memoryDocument(superseded), [1, 0]),
        withVector(memoryDocument(successor), [0.4, 0.9165]),
      ],
    });
    const answer = await service(store).recall({ ...BASE, tier: 'memories' });
    expect(answer.results).toHaveLength(1);
    const [result] = answer.results;
    if (result.tier !== 'memories') throw new Error(`a memory result expected, got ${result.tier}`);
    expect(result.id).toBe('m-new');
    expect(result.memory.stale).toBe(false);
    expect(result.replaces).toEqual([
      {
        memoryId: 'm-old',
        content: `[SUPERSEDED — a newer memory replaces it] ${superseded.content}`,
        confidence: 0.8 * 0.5,
        reason: 'superseded',
      },
    ]);
  });

  it('should keep k results at most', async () => {
    const answer = await service().recall({ ...BASE, k: 2 });
    expect(answer.results).toHaveLength(2);
  });

  it('should resolve recent sessions through the store', async () => {
    const store = new FakeStore();
    await service(store).recall({
      ...BASE,
      tier: 'turns',
      temporal: { mode: 'recent_sessions', n: 3 },
    });
    expect(store.sessionsAsked).toEqual([3]);
    expect(store.queries[0].query.filter).toContainEqual(anyOfFilter('sessionId', ['session-1']));
  });

  it('should refuse an invalid request before embedding anything', async () => {
    const before = fakeEmbedder.calls;
    await expect(service().recall({ ...BASE, projectId: '' })).rejects.toBeInstanceOf(
      InvalidRecallRequestError,
    );
    expect(fakeEmbedder.calls).toBe(before);
  });
});

describe('candidatesPerList', () => {
  it('should over-fetch three times k within bounds', () => {
    expect(candidatesPerList(1)).toBe(30);
    expect(candidatesPerList(20)).toBe(60);
    expect(candidatesPerList(100)).toBe(300);
  });
});
