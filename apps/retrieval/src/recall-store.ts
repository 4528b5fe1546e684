import type { Client } from '@elastic/elasticsearch';
import type { AccessUpdate, RecallScope, RecallTier, SessionActivity } from '@engram/core';
import {
  episodesOfTurns,
  listDocuments,
  recentSessionActivity,
  CandidateSearcher,
  SESSION_ACTIVITY_TIERS,
  writeAccessUpdates,
  type CandidateQuery,
  type Candidates,
  type ListQuery,
  type Listed,
  type RetrievalIndexNames,
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

/** The distributed store: the three retrieval indices on Elasticsearch. */
export function elasticsearchRecallStore(
  client: Client,
  indices: RetrievalIndexNames,
): RecallStore {
  // The tiers of a recall are asked together: one `_msearch` for all of them.
  const searcher = new CandidateSearcher(client);
  return {
    candidates: (tier, query) => searcher.search({ ...query, index: indices[tier] }),
    episodesOfTurns: (scope, eventIds) =>
      episodesOfTurns(client, indices.episodes, scope, eventIds),
    recentSessions: (scope, n) =>
      recentSessionActivity(
        client,
        SESSION_ACTIVITY_TIERS.map((tier) => indices[tier]),
        scope,
        n,
      ),
    writeAccess: (updates) => writeAccessUpdates(client, indices.memories, updates),
    list: (tier, query) => listDocuments(client, { ...query, index: indices[tier] }),
  };
}
