import type { Client } from '@elastic/elasticsearch';
import type {
  RecallStore,
  RecallTier,
  StoreCandidateQuery,
  StoreCandidates,
  StoreListQuery,
  StoreListed,
} from '@engram/core';
import {
  ensureMemoryAccessIndex,
  type AccessCounterMirror,
  episodesOfTurns,
  listDocuments,
  readAccessCounters,
  recentSessionActivity,
  CandidateSearcher,
  classifyElasticsearchError,
  dslFilters,
  SESSION_ACTIVITY_TIERS,
  withCountedAccess,
  writeAccessUpdates,
  type ElasticsearchIndexNames,
} from '@engram/elasticsearch';
import { type MemoryDocument } from '@engram/core';

/** The port, defined by the core (libs/core/src/ports/recall-store.port.ts). */
export type { RecallStore } from '@engram/core';

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
    candidates: async <S>(
      tier: RecallTier,
      { scope, filter, ...query }: StoreCandidateQuery,
    ): Promise<StoreCandidates<S>> => {
      const found = await searcher.search<S>({
        ...query,
        filter: dslFilters(scope, filter),
        index: indices[tier],
      });
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
    list: async <S>(
      tier: RecallTier,
      { scope, filter, size }: StoreListQuery,
    ): Promise<StoreListed<S>[]> => {
      const listed = await listDocuments<S>(client, {
        index: indices[tier],
        filter: dslFilters(scope, filter),
        size,
      });
      if (tier !== 'memories') return listed;
      const counted = await withCounters(listed.map((doc) => [doc.id, doc.source]));
      return counted.map(([id, source]) => ({ id, source }));
    },
  };
}
