import type { Client } from '@elastic/elasticsearch';
import type { SearchHit } from '@elastic/elasticsearch/lib/api/types';
import type { RecallScope, SessionActivity } from '@engram/core';
import { classifyElasticsearchError } from './elasticsearch-client';
import type { EpisodeDocument } from '@engram/core';
import type { RetrievalTier } from './retrieval-indices';
import { scopeFilter } from './search-filters';

// The reads of recall beside its candidate search: the episodes that hold the turns found, the
// recently active sessions, and the tenants of a project.

/**
 * The episodes each turn belongs to, by the turn's eventId: an episode lists the eventIds of its
 * user prompts (`sourceEventIds`), which is exact even when threads interleave in one session
 * (a promptId range would not be). A prompt not yet segmented has none.
 */
export async function episodesOfTurns(
  client: Client,
  index: string,
  scope: RecallScope,
  eventIds: readonly string[],
): Promise<Map<string, string[]>> {
  const byTurn = new Map<string, string[]>();
  if (eventIds.length === 0) return byTurn;
  let hits: SearchHit<Pick<EpisodeDocument, 'episodeId' | 'sourceEventIds'>>[];
  try {
    const response = await client.search<Pick<EpisodeDocument, 'episodeId' | 'sourceEventIds'>>({
      index,
      ignore_unavailable: true,
      size: Math.min(1_000, eventIds.length * 5),
      track_total_hits: false,
      _source: ['episodeId', 'sourceEventIds'],
      query: {
        bool: { filter: [...scopeFilter(scope), { terms: { sourceEventIds: [...eventIds] } }] },
      },
      sort: [{ startedAt: 'asc' }, { episodeId: 'asc' }],
    });
    hits = response.hits.hits;
  } catch (error) {
    throw classifyElasticsearchError(error);
  }
  const wanted = new Set(eventIds);
  for (const hit of hits) {
    const episode = hit._source;
    if (!episode) continue;
    for (const eventId of episode.sourceEventIds.filter((id) => wanted.has(id))) {
      byTurn.set(eventId, [...(byTurn.get(eventId) ?? []), episode.episodeId]);
    }
  }
  return byTurn;
}

/** Which tiers hold session activity (`timestamp` of user prompts and of episodes). */
export const SESSION_ACTIVITY_TIERS: readonly RetrievalTier[] = ['turns', 'episodes'];

/**
 * The `n` most recently active sessions of a project, for the `recent_sessions(n)` mode: one
 * terms aggregation ordered by each session's latest `timestamp`.
 */
export async function recentSessionActivity(
  client: Client,
  indices: readonly string[],
  scope: RecallScope,
  n: number,
): Promise<SessionActivity[]> {
  try {
    const response = await client.search({
      index: [...indices],
      size: 0,
      ignore_unavailable: true,
      query: { bool: { filter: scopeFilter(scope) } },
      aggs: {
        sessions: {
          terms: { field: 'sessionId', size: n, order: { last: 'desc' } },
          aggs: { last: { max: { field: 'timestamp' } } },
        },
      },
    });
    const buckets =
      (
        response.aggregations?.sessions as
          { buckets: { key: string; last: { value: number | null } }[] } | undefined
      )?.buckets ?? [];
    return buckets.map((bucket) => ({
      sessionId: String(bucket.key),
      lastActivityAt: bucket.last.value ?? 0,
    }));
  } catch (error) {
    throw classifyElasticsearchError(error);
  }
}

/** The tenants that have documents of a project (a CLI without --tenant takes the only one). */
export async function tenantsWithProject(
  client: Client,
  indices: readonly string[],
  projectId: string,
): Promise<string[]> {
  try {
    const response = await client.search({
      index: [...indices],
      size: 0,
      ignore_unavailable: true,
      query: { term: { projectId } },
      aggs: { tenants: { terms: { field: 'tenantId', size: 10 } } },
    });
    const buckets =
      (response.aggregations?.tenants as { buckets: { key: string }[] } | undefined)?.buckets ?? [];
    return buckets.map((bucket) => String(bucket.key)).sort();
  } catch (error) {
    throw classifyElasticsearchError(error);
  }
}
