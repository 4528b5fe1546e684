import type { Client } from '@elastic/elasticsearch';
import { classifyElasticsearchError } from './elasticsearch-client';
import type { Filter } from './search-filters';
import { withUnpackedVector } from '@engram/core';

// Filtered listings of a retrieval index, without a query text: what the rpcs beside Recall read
// (injection candidates about a file, a session's turns and episodes, an episode by id, the
// latest work state). The core decides; these only fetch.

export interface ListQuery {
  index: string;
  /** Scope and filters (the same clause builders as the candidate searches). */
  filter: readonly Filter[];
  size: number;
}

/** A listed document: its id and `_source`, newest first. */
export interface Listed<S> {
  id: string;
  source: S;
}

/** At most this many documents per listing: a listing feeds a decision, not an export. */
export const MAX_LIST_SIZE = 1_000;

/**
 * The documents matching every filter, newest `timestamp` first (ties: by eventId, then id,
 * whatever the store), at most `size`. A tier nothing was indexed into yet lists nothing.
 */
export async function listDocuments<S>(client: Client, query: ListQuery): Promise<Listed<S>[]> {
  try {
    const response = await client.search<S>({
      index: query.index,
      ignore_unavailable: true,
      size: Math.min(MAX_LIST_SIZE, Math.max(0, query.size)),
      track_total_hits: false,
      query: { bool: { filter: [...query.filter] } },
      sort: [{ timestamp: { order: 'desc', unmapped_type: 'date' } }, { eventId: 'asc' }],
    });
    return response.hits.hits.flatMap((hit) =>
      hit._id !== undefined && hit._source !== undefined
        ? [{ id: hit._id, source: withUnpackedVector(hit._source) }]
        : [],
    );
  } catch (error) {
    throw classifyElasticsearchError(error);
  }
}
