import type { Episode, Memory, PromptSubmitted } from '@engram/contracts';
import type { MemoryFilter } from '../../retrieval/memory-filter';
import type { RecallScope } from '../../retrieval/recall-scope';
import type { RankedHit } from '../../retrieval/rrf';
import type { TemporalConstraint } from '../../retrieval/temporal';
import { DAY, memory, NOW, prompt as userPrompt } from '../../retrieval/testing/fixtures';
import { memoryFilters } from '../recall-store.filters';
import type { RecallStore } from '../recall-store.port';
import type { Delivered } from '../stream-stage';
import { contractEmbedder, queryVector, type ContractEmbedder } from './contract-embedder';

// What the RecallStore contract's cases share: the fixture an adapter provides, the records they
// index, and indexing and searching through the fixture. Test support only.

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

let offset = 0;

function delivered<E>(event: E, key: string | null = null): Delivered<E> {
  return { event, topic: 'contract', partition: 0, offset: String(offset++), key, headers: {} };
}

/** A user prompt of `scope`, in session s-1 a day ago unless `overrides` say otherwise. */
export function prompt(
  scope: RecallScope,
  overrides: Partial<PromptSubmitted> & { eventId: string },
): PromptSubmitted {
  return userPrompt({ ...scope, sessionId: 's-1', timestamp: NOW - DAY, ...overrides });
}

export function memories(scope: RecallScope, suffix = ''): Memory[] {
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

export const ids = (hits: readonly RankedHit[] | null) => (hits ?? []).map((hit) => hit.id);

export interface IndexBatch {
  memories?: Memory[];
  episodes?: Episode[];
  prompts?: PromptSubmitted[];
  deleteMemories?: string[];
}

/** The cases' view of the fixture, which `fixture()` returns once `beforeAll` has made it. */
export type RecallStoreHarness = ReturnType<typeof recallStoreHarness>;

export function recallStoreHarness(fixture: () => RecallStoreFixture) {
  const embedder = contractEmbedder();

  /** Indexes the records (and memory tombstones) through the adapter's indexer, then settles. */
  async function index(batch: IndexBatch, using: ContractEmbedder = embedder) {
    const indexer = fixture().indexer(using);
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
    await fixture().settle();
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
    return fixture().store.candidates<Memory & { embedding: number[] | null }>('memories', {
      scope,
      text,
      vector: embedded === null ? null : queryVector(embedded),
      filter: memoryFilters({ ...options.filter }, options.temporal),
      size: 10,
      minSimilarity: 0.2,
    });
  }

  function scopeOf(prefix: string): RecallScope {
    return { tenantId: 'acme', projectId: fixture().projectName(prefix) };
  }

  return {
    get store(): RecallStore {
      return fixture().store;
    },
    settle: () => fixture().settle(),
    index,
    searchMemories,
    scopeOf,
  };
}
