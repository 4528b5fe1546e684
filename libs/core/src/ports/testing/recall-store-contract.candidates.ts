import { expect, it } from 'vitest';
import { cosine } from '../../math/vectors';
import type { TemporalConstraint } from '../../retrieval/temporal';
import { DAY, episode, memory, NOW } from '../../retrieval/testing/fixtures';
import { episodeFilters, turnFilters } from '../recall-store.filters';
import { CONTRACT_MODEL, conceptVector, contractEmbedder, queryVector } from './contract-embedder';
import { ids, memories, prompt, type RecallStoreHarness } from './recall-store-contract.harness';

// The RecallStore contract, candidate searches: BM25 and kNN lists, their scope, model and
// filters.

export function candidateSearchCases(h: RecallStoreHarness): void {
  const { index, searchMemories, scopeOf } = h;

  it('should find a document by its words alone (BM25), with its stored vector', async () => {
    const scope = scopeOf('bm25');
    await index({ memories: memories(scope) });
    const found = await searchMemories(scope, 'legacy provider', { vector: 'mobile screen' });
    expect(ids(found.bm25)).toEqual(['m-build']);
    expect(ids(found.knn)).toEqual(['m-css']);
    const stored = found.sources.get('m-build')!;
    expect(stored.memoryId).toBe('m-build');
    expect(stored.embeddingModel).toBe(CONTRACT_MODEL);
    expect(stored.embedding![3]).toBeCloseTo(1, 5); // the build concept, for exact cosine
  });

  it('should find a paraphrase with no word in common by kNN, above the floor only', async () => {
    const scope = scopeOf('knn');
    await index({ memories: memories(scope) });
    const found = await searchMemories(scope, 'signin credential trouble');
    expect(found.bm25).toEqual([]);
    expect(ids(found.knn)).toEqual(['m-auth']);
    expect(found.knn![0].score).toBeCloseTo(1, 3); // Elasticsearch's (1 + cos) / 2
  });

  it('should run each list alone: BM25 without a vector, kNN without a text', async () => {
    const scope = scopeOf('split');
    await index({ memories: memories(scope) });
    const lexical = await searchMemories(scope, 'legacy provider', { vector: null });
    expect(ids(lexical.bm25)).toEqual(['m-build']);
    expect(lexical.knn).toBeNull();
    expect(lexical.sources.get('m-build')!.embedding![3]).toBeCloseTo(1, 5);
    const semantic = await searchMemories(scope, null, { vector: 'mobile screen' });
    expect(semantic.bm25).toEqual([]);
    expect(ids(semantic.knn)).toEqual(['m-css']);
    expect([...semantic.sources.keys()]).toEqual(['m-css']);
  });

  it('should report each kNN hit’s cosine with the query, the exact one of its stored vector', async () => {
    const scope = scopeOf('similarity');
    const indexed = memories(scope);
    await index({ memories: indexed });
    const query = 'signin session on a mobile screen'; // auth ×2, css ×2: cos 1/√2 with each
    const found = await searchMemories(scope, 'zzz', { vector: query });
    expect(ids(found.knn).sort()).toEqual(['m-auth', 'm-css']);
    for (const hit of found.knn!) {
      const content = indexed.find((m) => m.memoryId === hit.id)!.content;
      const expected = cosine(queryVector(query).vector, conceptVector(content));
      expect(expected).toBeCloseTo(Math.SQRT1_2, 6);
      expect(hit.similarity).toBeCloseTo(expected, 6); // float32 arithmetic in the index
    }
  });

  it('should compare only vectors of the query model', async () => {
    const scope = scopeOf('model');
    await index({ memories: memories(scope) });
    const other = memory({ ...scope, memoryId: 'm-auth-other', content: 'Auth token mutex' });
    await index({ memories: [other] }, contractEmbedder('contract-other@1'));
    const found = await searchMemories(scope, 'signin credential');
    expect(ids(found.knn)).toEqual(['m-auth']);
    const lexical = await searchMemories(scope, 'auth token mutex');
    expect(ids(lexical.bm25)).toContain('m-auth-other'); // words know no model
    expect(lexical.sources.get('m-auth-other')!.embeddingModel).toBe('contract-other@1');
  });

  it("should never return another tenant's documents, from any method", async () => {
    const scope = scopeOf('tenancy');
    const other = { ...scope, tenantId: 'globex' };
    await index({
      memories: [...memories(scope), ...memories(other, '-globex')],
      episodes: [episode({ ...other, episodeId: 'e-globex', sourceEventIds: ['p-1'] })],
      prompts: [prompt(other, { eventId: 'p-1', text: 'auth token logout', sessionId: 's-g' })],
    });
    const found = await searchMemories(scope, 'auth token session mutex');
    const all = [...ids(found.bm25), ...ids(found.knn), ...found.sources.keys()];
    expect(all).toContain('m-auth');
    expect(all.filter((id) => id.endsWith('-globex'))).toEqual([]);
    const turns = await h.store.candidates('turns', {
      text: 'auth token logout',
      vector: queryVector('auth token logout'),
      scope,
      filter: turnFilters(undefined),
      size: 10,
    });
    expect([...turns.sources.keys()]).toEqual([]);
    expect(await h.store.episodesOfTurns(scope, ['p-1'])).toEqual(new Map());
    expect(await h.store.recentSessions(scope, 5)).toEqual([]);
  });

  it('should apply the memory filters: types, scopes, stale, confidence, time', async () => {
    const scope = scopeOf('filters');
    await index({ memories: memories(scope) });
    const typed = await searchMemories(scope, 'fake timers clock auth token', {
      filter: { types: ['decision'] },
    });
    expect(new Set([...ids(typed.bm25), ...ids(typed.knn)])).toEqual(new Set(['m-time']));
    const global = await searchMemories(scope, 'fake timers auth token', {
      filter: { scopes: ['global'] },
    });
    expect(ids(global.bm25)).toEqual(['m-time']);
    expect(ids((await searchMemories(scope, 'billing cron')).bm25)).toEqual(['m-stale']);
    const fresh = await searchMemories(scope, 'billing cron', { filter: { stale: 'exclude' } });
    expect([...ids(fresh.bm25), ...ids(fresh.knn)]).toEqual([]);
    expect(ids((await searchMemories(scope, 'kafka consumer')).bm25)).toEqual(['m-low']);
    const confident = await searchMemories(scope, 'kafka consumer', {
      filter: { minConfidence: 0.5 },
    });
    expect([...ids(confident.bm25), ...ids(confident.knn)]).toEqual([]);
    const recent = await searchMemories(scope, 'fake timers auth token', {
      temporal: { kind: 'range', fromMs: NOW - 3 * DAY, toMs: NOW },
    });
    expect(ids(recent.bm25)).toEqual(['m-time']);
    const ofSession = await searchMemories(scope, 'fake timers auth token', {
      temporal: { kind: 'sessions', sessionIds: ['s-2'] },
    });
    expect(ids(ofSession.bm25)).toEqual(['m-auth']); // by provenanceSessionIds
  });

  it('should filter episodes by overlap with a range (open ones from their start) and turns by time', async () => {
    const scope = scopeOf('episodes');
    await index({
      episodes: [
        episode({
          ...scope,
          episodeId: 'e-closed',
          summary: 'fixed the auth token refresh',
          startedAt: NOW - 3 * DAY,
          endedAt: NOW - 3 * DAY + 3_600_000,
        }),
        episode({
          ...scope,
          episodeId: 'e-open',
          sessionId: 's-2',
          summary: 'auth token logout race',
          startedAt: NOW - 3_600_000,
          endedAt: null,
        }),
      ],
      prompts: [
        prompt(scope, { eventId: 'p-old', text: 'auth token refresh', timestamp: NOW - 3 * DAY }),
        prompt(scope, {
          eventId: 'p-new',
          text: 'auth logout',
          timestamp: NOW,
          sessionId: 's-2',
        }),
      ],
    });
    const episodesIn = async (temporal: TemporalConstraint) =>
      ids(
        (
          await h.store.candidates('episodes', {
            text: 'auth token',
            vector: queryVector('auth token'),
            scope,
            filter: episodeFilters(temporal),
            size: 10,
          })
        ).bm25,
      ).sort();
    expect(await episodesIn({ kind: 'range', fromMs: NOW - 2 * 3_600_000, toMs: NOW })).toEqual([
      'e-open',
    ]);
    expect(
      await episodesIn({ kind: 'range', fromMs: NOW - 3 * DAY + 60_000, toMs: NOW - 2 * DAY }),
    ).toEqual(['e-closed']);
    expect(await episodesIn({ kind: 'sessions', sessionIds: ['s-2'] })).toEqual(['e-open']);
    const turns = await h.store.candidates('turns', {
      text: 'auth',
      vector: queryVector('auth'),
      scope,
      filter: turnFilters({ kind: 'range', fromMs: NOW - DAY, toMs: NOW }),
      size: 10,
    });
    expect(ids(turns.bm25)).toEqual(['p-new']);
  });
}
