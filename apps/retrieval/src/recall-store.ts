import type { Client } from '@elastic/elasticsearch';
import type { AccessUpdate, RecallScope, RecallTier, SessionActivity } from '@engram/core';
import {
  ensureMemoryAccessIndex,
  type AccessCounterMirror,
  episodesOfTurns,
  listDocuments,
  readAccessCounters,
  recentSessionActivity,
  CandidateSearcher,
  classifyElasticsearchError,
  SESSION_ACTIVITY_TIERS,
  withCountedAccess,
  writeAccessUpdates,
  type CandidateQuery,
  type Candidates,
  type ElasticsearchIndexNames,
  type ListQuery,
  type Listed,
  type MemoryDocument,
} from '@engram/elasticsearch';

/** What recall needs from the store: the seam between RecallService and Elasticsearch. */
export interface RecallStore {
  /** BM25 and kNN candidates of one tier (the index is the store's business). */
  candidates<S>(tier: RecallTier, query: Omit<CandidateQuery, 'index'>): Promise<Candidates<S>>;
  /** The episodes each turn (by eventId) belongs to, for the turns' provenance. */
  episodesOfTurns(scope: RecallScope, eventIds: string[]): Promise<Map<string, string[]>>;
  /** Latest activity of the most recently active sessions of a project. */
  recentSessions(scope: RecallScope, n: number): Promise<SessionActivity[]>;
  /** Applies access-count updates to the memories; returns those to retry. */
  writeAccess(updates: AccessUpdate[]): Promise<{ failed: AccessUpdate[] }>;
  /** Documents of a tier matching the filter, newest first, without a query text. */
  list<S>(tier: RecallTier, query: Omit<ListQuery, 'index'>): Promise<Listed<S>[]>;
}

export interface ElasticsearchRecallStoreOptions {
  /**
   * The counter index held in memory (a long-running server's; it starts and closes it): reads
   * and counter writes then skip their `_mget`. Absent: counters are read from Elasticsearch.
   */
  counters?: AccessCounterMirror | null;
}

/**
 * The distributed store: the three retrieval indices on Elasticsearch, and the memories' access
 * counters beside them (their own index: counting must not re-index a memory's vector). A memory
 * comes back from every read with its effective counters.
 */
export function elasticsearchRecallStore(
  client: Client,
  indices: ElasticsearchIndexNames,
  { counters: mirror = null }: ElasticsearchRecallStoreOptions = {},
): RecallStore {
  // The tiers of a recall are asked together: one `_msearch` for all of them.
  const searcher = new CandidateSearcher(client);
  /** Memory documents (by id) with their counters folded in: one `_mget` for all of them. */
  const withCounters = async <S>(memories: [string, S][]): Promise<[string, S][]> => {
    const ids = memories.map(([id]) => id);
    const counters =
      mirror?.counted(ids) ?? (await readAccessCounters(client, indices.memoryAccess, ids));
    return memories.map(([id, source]) => [
      id,
      withCountedAccess(id, source as MemoryDocument, counters) as S,
    ]);
  };
  // Before the first counter write (a missing index reads as no counters).
  let accessIndexReady: Promise<unknown> | null = null;
  const ensureAccessIndex = () => {
    accessIndexReady ??= ensureMemoryAccessIndex(client, indices.memoryAccess).catch((error) => {
      accessIndexReady = null; // the next flush tries again; the tracker requeues meanwhile
      throw classifyElasticsearchError(error);
    });
    return accessIndexReady;
  };
  return {
    candidates: async <S>(tier: RecallTier, query: Omit<CandidateQuery, 'index'>) => {
      const found = await searcher.search<S>({ ...query, index: indices[tier] });
      if (tier !== 'memories') return found;
      return { ...found, sources: new Map(await withCounters([...found.sources])) };
    },
    episodesOfTurns: (scope, eventIds) =>
      episodesOfTurns(client, indices.episodes, scope, eventIds),
    recentSessions: (scope, n) =>
      recentSessionActivity(
        client,
        SESSION_ACTIVITY_TIERS.map((tier) => indices[tier]),
        scope,
        n,
      ),
    writeAccess: async (updates) => {
      await ensureAccessIndex();
      return writeAccessUpdates(client, indices, updates, mirror);
    },
    list: async <S>(tier: RecallTier, query: Omit<ListQuery, 'index'>) => {
      const listed = await listDocuments<S>(client, { ...query, index: indices[tier] });
      if (tier !== 'memories') return listed;
      const counted = await withCounters(listed.map((doc) => [doc.id, doc.source]));
      return counted.map(([id, source]) => ({ id, source }));
    },
  };
}
