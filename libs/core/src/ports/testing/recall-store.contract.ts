// The RecallStore contract: one suite, run against every adapter (SQLite FTS5 + exact kNN in the
// unit tier, Elasticsearch in the integration tier). Documents go in through the real indexer
// (the fixture's), with a small deterministic "concept" embedder defined here, so a paraphrase
// with no word in common is near in vector space and far lexically. Test support only.
import type { Episode, Memory, PromptSubmitted } from '@engram/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MemoryFilter } from '../../retrieval/memory-filter';
import type { ModelVector } from '../../retrieval/model-vector';
import type { RecallScope } from '../../retrieval/recall-scope';
import type { RankedHit } from '../../retrieval/rrf';
import type { TemporalConstraint } from '../../retrieval/temporal';
import { DAY, episode, memory, NOW } from '../../retrieval/testing/fixtures';
import { cosine } from '../../math/vectors';
import {
  anyOfFilter,
  episodeFilters,
  memoryFilters,
  relatedFileFilter,
  turnFilters,
  workStateFilters,
} from '../recall-store.filters';
import type { RecallStore, StoreFilter } from '../recall-store.port';
import type { Delivered } from '../stream-stage';

export interface ContractEmbedder {
  readonly id: string;
  readonly dims: number;
  embed(texts: readonly string[]): Promise<Float32Array[]>;
}

/** A record, or (on the compacted topics) the tombstone of a key. */
export type ContractItem<E> = Delivered<E> | (Delivered<null> & { key: string });

/** The indexer's handlers (RetrievalIndexer), structurally. */
export interface ContractIndexer {
  handleMemories(items: ContractItem<Memory>[]): Promise<void>;
  handleEpisodes(items: ContractItem<Episode>[]): Promise<void>;
  handlePrompts(items: Delivered<PromptSubmitted>[]): Promise<void>;
}

export interface RecallStoreFixture {
  store: RecallStore;
  /** The indexer of this adapter, embedding with `embedder`. */
  indexer(embedder: ContractEmbedder): ContractIndexer;
  /** Makes every write so far visible to searches (Elasticsearch: refresh). */
  settle(): Promise<void>;
  /** A project id no other test (or earlier run) uses. */
  projectName(prefix: string): string;
  close(): Promise<void>;
}

// ---- a deterministic embedder: one dimension per concept ----

const CONCEPTS: readonly (readonly string[])[] = [
  ['auth', 'token', 'login', 'logout', 'signin', 'credential', 'credentials', 'session', 'mutex'],
  ['time', 'timer', 'timers', 'clock', 'date', 'fake', 'expiry', 'tick'],
  ['database', 'postgres', 'pool', 'connection', 'connections', 'sql', 'redis', 'cache'],
  ['webpack', 'build', 'bundle', 'bundler', 'openssl', 'node', 'compile'],
  ['css', 'layout', 'grid', 'mobile', 'screen', 'page', 'checkout'],
  ['kafka', 'consumer', 'offsets', 'rebalance', 'stream', 'partition'],
  ['billing', 'invoice', 'cron', 'nightly', 'payment'],
];

export const CONTRACT_MODEL = 'contract-concepts@1';

function conceptVector(text: string): Float32Array {
  const vector = new Float32Array(CONCEPTS.length);
  for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    CONCEPTS.forEach((words, i) => {
      if (words.includes(word)) vector[i] += 1;
    });
  }
  const length = Math.hypot(...vector);
  return length === 0 ? vector : vector.map((v) => v / length);
}

export function contractEmbedder(id = CONTRACT_MODEL): ContractEmbedder {
  return {
    id,
    dims: CONCEPTS.length,
    embed: (texts) => Promise.resolve(texts.map(conceptVector)),
  };
}

function queryVector(text: string, model = CONTRACT_MODEL): ModelVector {
  return { model, dimension: CONCEPTS.length, vector: Array.from(conceptVector(text)) };
}

// ---- records ----

let offset = 0;

function delivered<E>(event: E, key: string | null = null): Delivered<E> {
  return { event, topic: 'contract', partition: 0, offset: String(offset++), key, headers: {} };
}

function prompt(scope: RecallScope, overrides: Partial<PromptSubmitted> & { eventId: string }) {
  const record: PromptSubmitted = {
    ...scope,
    sessionId: 's-1',
    agentId: 'claude-code',
    userId: 'user-1',
    timestamp: NOW - DAY,
    schemaVersion: 1,
    promptId: 1,
    source: 'user',
    channel: 'cli',
    channelKind: 'explicit',
    explicitThreadId: null,
    text: `prompt ${overrides.eventId}`,
    methodology: null,
    methodologyPhase: null,
    workUnitRef: null,
    parentEpisodeId: null,
    ...overrides,
  };
  return record;
}

function memories(scope: RecallScope, suffix = ''): Memory[] {
  const m = (memoryId: string, overrides: Partial<Memory>) =>
    memory({ ...scope, memoryId: `${memoryId}${suffix}`, ...overrides });
  return [
    m('m-auth', {
      content: 'Auth token refresh races with logout unless it holds the session mutex',
      sessionId: 's-1',
      provenanceSessionIds: ['s-2'],
    }),
    m('m-time', {
      memoryType: 'decision',
      content: 'Tests fake the clock with vitest fake timers, never by mocking Date.now',
      scope: 'global',
      createdAt: NOW - 2 * DAY,
    }),
    m('m-db', { content: 'Postgres connection pool exhausted under load: raise max connections' }),
    m('m-build', {
      memoryType: 'error_pattern',
      content: 'ERR_OSSL_EVP_UNSUPPORTED from webpack: set NODE_OPTIONS=--openssl-legacy-provider',
    }),
    m('m-css', { content: 'The checkout grid layout collapses on narrow mobile screens' }),
    m('m-low', { content: 'Kafka consumer offsets commit before shutdown', confidence: 0.3 }),
    m('m-stale', {
      content: 'The nightly billing cron must run after the invoice export finishes',
      staleAt: NOW - DAY,
    }),
  ];
}

const ids = (hits: readonly RankedHit[] | null) => (hits ?? []).map((hit) => hit.id);

/** Runs the RecallStore contract against the store a fixture provides. */
export function describeRecallStoreContract(
  name: string,
  makeFixture: () => Promise<RecallStoreFixture>,
): void {
  describe(`RecallStore contract: ${name}`, () => {
    let fx: RecallStoreFixture;
    const embedder = contractEmbedder();

    beforeAll(async () => {
      fx = await makeFixture();
    });
    afterAll(async () => {
      await fx?.close();
    });

    async function index(
      batch: {
        memories?: Memory[];
        episodes?: Episode[];
        prompts?: PromptSubmitted[];
        deleteMemories?: string[];
      },
      using: ContractEmbedder = embedder,
    ) {
      const indexer = fx.indexer(using);
      const tombstones = (batch.deleteMemories ?? []).map((id) => ({
        ...delivered(null, id),
        key: id,
      }));
      await indexer.handleMemories([
        ...(batch.memories ?? []).map((m) => delivered(m, m.memoryId)),
        ...tombstones,
      ]);
      await indexer.handleEpisodes((batch.episodes ?? []).map((e) => delivered(e, e.episodeId)));
      await indexer.handlePrompts((batch.prompts ?? []).map((p) => delivered(p, p.sessionId)));
      await fx.settle();
    }

    function searchMemories(
      scope: RecallScope,
      text: string | null,
      options: {
        filter?: Partial<MemoryFilter>;
        temporal?: TemporalConstraint;
        /** The text embedded for kNN (default: `text`); null: no kNN list. */
        vector?: string | null;
      } = {},
    ) {
      const embedded = options.vector === undefined ? text : options.vector;
      return fx.store.candidates<Memory & { embedding: number[] | null }>('memories', {
        scope,
        text,
        vector: embedded === null ? null : queryVector(embedded),
        filter: memoryFilters({ ...options.filter }, options.temporal),
        size: 10,
        minSimilarity: 0.2,
      });
    }

    function scopeOf(prefix: string): RecallScope {
      return { tenantId: 'acme', projectId: fx.projectName(prefix) };
    }

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
      const turns = await fx.store.candidates('turns', {
        text: 'auth token logout',
        vector: queryVector('auth token logout'),
        scope,
        filter: turnFilters(undefined),
        size: 10,
      });
      expect([...turns.sources.keys()]).toEqual([]);
      expect(await fx.store.episodesOfTurns(scope, ['p-1'])).toEqual(new Map());
      expect(await fx.store.recentSessions(scope, 5)).toEqual([]);
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
            await fx.store.candidates('episodes', {
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
      const turns = await fx.store.candidates('turns', {
        text: 'auth',
        vector: queryVector('auth'),
        scope,
        filter: turnFilters({ kind: 'range', fromMs: NOW - DAY, toMs: NOW }),
        size: 10,
      });
      expect(ids(turns.bm25)).toEqual(['p-new']);
    });

    it('should delete a memory on its tombstone, and take a repeated tombstone calmly', async () => {
      const scope = scopeOf('tombstone');
      const corpus = memories(scope);
      await index({ memories: corpus });
      expect(ids((await searchMemories(scope, 'postgres pool')).bm25)).toEqual(['m-db']);
      await index({ deleteMemories: ['m-db'] });
      await index({ deleteMemories: ['m-db'] });
      const after = await searchMemories(scope, 'postgres pool');
      expect([...ids(after.bm25), ...ids(after.knn), ...after.sources.keys()]).toEqual([]);
    });

    it('should upsert by id: indexing again changes nothing, a new version replaces the old', async () => {
      const scope = scopeOf('idempotent');
      const corpus = memories(scope);
      await index({ memories: corpus });
      const first = await searchMemories(scope, 'auth token session mutex');
      await index({ memories: corpus });
      const again = await searchMemories(scope, 'auth token session mutex');
      expect(ids(again.bm25)).toEqual(ids(first.bm25));
      expect(ids(again.knn)).toEqual(ids(first.knn));
      const db = corpus.find((m) => m.memoryId === 'm-db')!;
      await index({ memories: [{ ...db, content: 'Redis cache eviction drops sessions' }] });
      expect((await searchMemories(scope, 'postgres')).bm25).toEqual([]);
      // (Elasticsearch refuses a zero query vector: every query here names a concept.)
      const evicted = await searchMemories(scope, 'eviction', { vector: 'redis cache' });
      expect(ids(evicted.bm25)).toEqual(['m-db']);
      expect(ids(evicted.knn)).toEqual(['m-db']);
    });

    it('should name the episodes of turns, and the most recently active sessions', async () => {
      const scope = scopeOf('sessions');
      await index({
        episodes: [
          episode({
            ...scope,
            episodeId: 'e-1',
            sessionId: 's-1',
            startedAt: NOW - 3 * DAY,
            timestamp: NOW - 3 * DAY,
            sourceEventIds: ['p-1', 'p-2'],
          }),
          episode({
            ...scope,
            episodeId: 'e-2',
            sessionId: 's-3',
            startedAt: NOW - 2 * DAY,
            timestamp: NOW - 2 * DAY,
            sourceEventIds: ['p-2'],
          }),
        ],
        prompts: [
          prompt(scope, { eventId: 'p-1', sessionId: 's-1', timestamp: NOW - 3 * DAY }),
          prompt(scope, { eventId: 'p-4', sessionId: 's-2', timestamp: NOW - 3_600_000 }),
        ],
      });
      expect(await fx.store.episodesOfTurns(scope, ['p-1', 'p-2', 'p-9'])).toEqual(
        new Map([
          ['p-1', ['e-1']],
          ['p-2', ['e-1', 'e-2']],
        ]),
      );
      expect(await fx.store.recentSessions(scope, 2)).toEqual([
        { sessionId: 's-2', lastActivityAt: NOW - 3_600_000 },
        { sessionId: 's-3', lastActivityAt: NOW - 2 * DAY },
      ]);
    });

    it('should list by filter without a query, newest first, within the scope and size', async () => {
      const scope = scopeOf('list');
      const other = { ...scope, tenantId: 'globex' };
      const about = (memoryId: string, timestamp: number, extra: Partial<Memory> = {}) =>
        memory({ ...scope, memoryId, timestamp, relatedFiles: ['src/auth/refresh.ts'], ...extra });
      await index({
        memories: [
          about('list-old', NOW - 3 * DAY),
          about('list-new', NOW - DAY),
          about('list-mid', NOW - 2 * DAY, { memoryType: 'decision' }),
          about('list-stale', NOW, { staleAt: NOW - DAY }),
          about('list-elsewhere', NOW, { relatedFiles: ['src/db/pool.ts'] }),
          memory({ ...other, memoryId: 'list-globex', relatedFiles: ['src/auth/refresh.ts'] }),
        ],
        episodes: [
          episode({ ...scope, episodeId: 'list-e-1', sessionId: 's-1', timestamp: NOW - DAY }),
          episode({ ...scope, episodeId: 'list-e-2', sessionId: 's-2', timestamp: NOW }),
        ],
      });
      const listIds = async (filter: readonly StoreFilter[], size = 10) =>
        (await fx.store.list<Memory>('memories', { scope, filter, size })).map((d) => d.id);
      const aboutFile = [
        ...memoryFilters({ types: ['gotcha'], stale: 'exclude' }, undefined),
        relatedFileFilter('/home/me/repo/src/auth/refresh.ts'),
      ];
      expect(await listIds(aboutFile)).toEqual(['list-new', 'list-old']);
      expect(await listIds(aboutFile, 1)).toEqual(['list-new']);
      const listed = await fx.store.list<Memory>('memories', { scope, filter: aboutFile, size: 1 });
      expect(listed[0].source).toMatchObject({ memoryId: 'list-new', tenantId: 'acme' });
      const byId = await fx.store.list<Episode>('episodes', {
        scope,
        filter: [...episodeFilters(undefined), anyOfFilter('episodeId', ['list-e-1'])],
        size: 10,
      });
      expect(byId.map((d) => d.source.episodeId)).toEqual(['list-e-1']);
      const ofOther = await fx.store.list('memories', {
        scope: other,
        filter: [...memoryFilters({}, undefined), anyOfFilter('memoryId', ['list-new'])],
        size: 10,
      });
      expect(ofOther).toEqual([]);
    });

    it("should list a session's work states: its own, its thread's, its work unit's (issue #20)", async () => {
      const scope = scopeOf('work-state');
      const story = { methodology: 'bmad', hierarchy: ['epic_3', 'story_3_2'], label: 'S3.2' };
      const state = (memoryId: string, sessionId: string, extra: Partial<Memory> = {}) =>
        memory({ ...scope, memoryId, memoryType: 'work_state', sessionId, ...extra });
      await index({
        memories: [
          state('ws-own', 's-1'),
          state('ws-thread', 's-2', { episodeId: 'ws-e-shared' }),
          state('ws-unit', 's-3', { workUnitRef: story }),
          state('ws-linked', 's-4', { episodeId: 'ws-e-linked' }),
          state('ws-other', 's-5', { episodeId: 'ws-e-other' }),
          state('ws-other-unit', 's-6', { workUnitRef: { ...story, hierarchy: ['epic_3'] } }),
          state('ws-own-stale', 's-1', { staleAt: NOW }),
          memory({ ...scope, memoryId: 'ws-gotcha', sessionId: 's-1' }),
        ],
        episodes: [
          episode({ ...scope, episodeId: 'ws-e-shared', sessionId: 's-2', threadId: 'ws-t' }),
          episode({ ...scope, episodeId: 'ws-e-mine', sessionId: 's-1', threadId: 'ws-t' }),
          episode({ ...scope, episodeId: 'ws-e-other', sessionId: 's-5', threadId: 'ws-t2' }),
        ],
      });
      const inThread = await fx.store.list<Episode>('episodes', {
        scope,
        filter: [...episodeFilters(undefined), anyOfFilter('threadId', ['ws-t'])],
        size: 10,
      });
      expect(inThread.map((d) => d.source.episodeId).sort()).toEqual(['ws-e-mine', 'ws-e-shared']);
      const listed = await fx.store.list<Memory>('memories', {
        scope,
        filter: workStateFilters({
          sessionId: 's-1',
          threadId: 'ws-t',
          threadEpisodeIds: ['ws-e-mine', 'ws-e-shared'],
          linkedEpisodeIds: ['ws-e-linked'],
          workUnits: [story],
        }),
        size: 10,
      });
      expect(listed.map((d) => d.id).sort()).toEqual([
        'ws-linked',
        'ws-own',
        'ws-thread',
        'ws-unit',
      ]);
    });

    it('should count accesses on memories of the same scope only', async () => {
      const scope = scopeOf('access');
      await index({ memories: memories(scope) });
      const update = {
        ...scope,
        memoryId: 'm-time',
        increment: 2,
        lastAccessedAt: NOW + DAY,
        firstRecordedAt: NOW,
      };
      expect((await fx.store.writeAccess([update])).failed).toEqual([]);
      await fx.store.writeAccess([{ ...update, tenantId: 'globex' }]);
      await fx.settle();
      const found = await searchMemories(scope, 'fake timers');
      expect(found.sources.get('m-time')).toMatchObject({
        accessCount: 2,
        lastAccessedAt: NOW + DAY,
      });
    });
  });
}
