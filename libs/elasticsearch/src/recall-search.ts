import type { Client } from '@elastic/elasticsearch';
import type {
  MsearchRequestItem,
  MsearchResponseItem,
  SearchHit,
  SearchRequest,
} from '@elastic/elasticsearch/lib/api/types';
import {
  DownstreamUnavailableError,
  type ModelVector,
  type RankedHit,
  type StoreCandidates,
} from '@engram/core';
import { classifyElasticsearchError } from './elasticsearch-client';
import { vectorToJson, withUnpackedVector } from '@engram/core';
import { sameModelFilter, type Filter } from './search-filters';

// The query side of the three retrieval indices (SPEC §7): candidate lists for the pure ranking
// core. Elasticsearch finds candidates (BM25 and kNN, in parallel, filtered: search-filters.ts);
// the core decides the order (RRF, exact cosine from the stored vectors, priors, phase weights).

/** One search of an `_msearch` (the body; the index goes in its header line). */
export type SearchRequestBody = Omit<SearchRequest, 'index'>;

/** One tier's candidate search. */
export interface CandidateQuery {
  index: string;
  /** What BM25 matches against `text`; null: no BM25 list (kNN only). */
  text: string | null;
  /** The query embedding; null: lexical only (no kNN list). */
  vector: ModelVector | null;
  /** Scope and filters, applied to both lists (kNN: as a pre-filter, so k stays k). */
  filter: readonly Filter[];
  /** Candidates per list. */
  size: number;
  /**
   * kNN neighbours less similar than this (raw cosine) are not candidates: nearest is not the
   * same as near, and an unrelated neighbour would still collect an RRF rank and the priors.
   */
  minSimilarity?: number;
}

/** The port's candidate lists; `sources` holds the `_source` of each candidate, by `_id`. */
export type Candidates<S> = StoreCandidates<S>;

/** HNSW explores this many candidates per shard for k results (Elastic's guidance: ≥ 1.5·k). */
export function numCandidates(size: number): number {
  return Math.min(10_000, Math.max(100, size * 4));
}

/** The BM25 search of a candidate query: `match` on the English-analysed `text`, filtered. */
export function lexicalSearchBody(query: CandidateQuery & { text: string }): SearchRequestBody {
  return {
    size: query.size,
    track_total_hits: false,
    query: {
      bool: { must: [{ match: { text: { query: query.text } } }], filter: [...query.filter] },
    },
  };
}

/**
 * The kNN search of a candidate query: same filters, plus the query's model and dimension. Hits
 * come back without their vectors: the score already says their cosine (`knnSimilarity`).
 *
 * A `knn` query, not the top-level `knn` section: the same neighbours and scores (`size` is k,
 * `num_candidates` per shard), but in the query phase, without the separate DFS round the
 * section takes — measured on 100k memories, an `_msearch` of BM25 + kNN p50 6.9 → 5.4 ms.
 */
export function semanticSearchBody(query: CandidateQuery, vector: ModelVector): SearchRequestBody {
  return {
    size: query.size,
    track_total_hits: false,
    // Both forms: indices of older versions keep the numbers in `_source` too.
    _source: { excludes: [VECTOR_FIELD, 'embeddingPacked'] },
    query: {
      knn: {
        field: VECTOR_FIELD,
        // 9 significant digits: the float32 Elasticsearch compares, at half the JSON of a double's.
        query_vector: vectorToJson(vector.vector),
        num_candidates: numCandidates(query.size),
        ...(query.minSimilarity !== undefined && { similarity: query.minSimilarity }),
        filter: [...query.filter, ...sameModelFilter(vector)],
      },
    },
  };
}

const VECTOR_FIELD = 'embedding';

/**
 * The cosine of a kNN hit from its score: for a `cosine` dense_vector Elasticsearch scores
 * (1 + cos) / 2, computed in float32 from the full-precision vectors (the mapping is `hnsw`, not
 * quantised), so this is the exact cosine to float32 rounding.
 */
export function knnSimilarity(score: number): number {
  return Math.min(1, Math.max(-1, 2 * score - 1));
}

/** The `_msearch` lines of one tier's candidate query: BM25 with a text, kNN with a vector. */
function candidateSearches(query: CandidateQuery): MsearchRequestItem[] {
  // A tier nothing was ever indexed into has no index yet: no candidates, not an error.
  const header = { index: query.index, ignore_unavailable: true };
  const searches: MsearchRequestItem[] = [];
  const { text } = query;
  if (text !== null) searches.push(header, lexicalSearchBody({ ...query, text }));
  if (query.vector) searches.push(header, semanticSearchBody(query, query.vector));
  return searches;
}

function candidatesOf<S>(
  query: CandidateQuery,
  responses: readonly MsearchResponseItem<S>[],
): Candidates<S> {
  const knnAt = query.text === null ? 0 : 1;
  const sources = new Map<string, S>();
  const ranked = (item: MsearchResponseItem<S> | undefined, kind: 'bm25' | 'knn'): RankedHit[] =>
    searchHits(item).flatMap((hit) => {
      if (hit._id === undefined || hit._source === undefined) return [];
      if (!sources.has(hit._id)) sources.set(hit._id, withUnpackedVector(hit._source));
      const score = hit._score ?? 0;
      return [
        kind === 'knn'
          ? { id: hit._id, score, similarity: knnSimilarity(score) }
          : { id: hit._id, score },
      ];
    });
  return {
    bm25: query.text === null ? [] : ranked(responses[0], 'bm25'),
    knn: query.vector ? ranked(responses[knnAt], 'knn') : null,
    sources,
  };
}

interface PendingCandidates {
  query: CandidateQuery;
  resolve: (candidates: Candidates<unknown>) => void;
  reject: (error: unknown) => void;
}

/**
 * Candidate searches (BM25 and kNN of a tier) in `_msearch` round trips: Elasticsearch runs the
 * searches of one request concurrently, and the queries asked in one turn of the event loop — a
 * recall asks its tiers together — share one request (measured on a 100k-memory index, three
 * tiers: p50 21 → 17 ms against one request per tier). Hits come back best first with their
 * `_source`. BM25 hits bring their vectors, for the core's exact cosine; kNN hits bring their
 * cosine instead (`similarity`) — a document in both lists keeps the BM25 `_source`. Each query
 * gets its own answer, or its own error.
 */
export class CandidateSearcher {
  private pending: PendingCandidates[] = [];

  constructor(private readonly client: Client) {}

  search<S>(query: CandidateQuery): Promise<Candidates<S>> {
    return new Promise<Candidates<S>>((resolve, reject) => {
      if (this.pending.length === 0) queueMicrotask(() => void this.flush());
      this.pending.push({
        query,
        resolve: resolve as (candidates: Candidates<unknown>) => void,
        reject,
      });
    });
  }

  private async flush(): Promise<void> {
    const batch = this.pending;
    this.pending = [];
    const searches = batch.map(({ query }) => candidateSearches(query));
    let responses: MsearchResponseItem<unknown>[];
    try {
      responses = (await this.client.msearch({ searches: searches.flat() })).responses;
    } catch (error) {
      const classified = classifyElasticsearchError(error);
      batch.forEach(({ reject }) => reject(classified));
      return;
    }
    let offset = 0;
    batch.forEach(({ query, resolve, reject }, i) => {
      const count = searches[i].length / 2; // a header and a body per search
      try {
        resolve(candidatesOf(query, responses.slice(offset, offset + count)));
      } catch (error) {
        reject(error);
      }
      offset += count;
    });
  }
}

/**
 * The hits of one `_msearch` item. A failed item fails the recall: overload and server errors as
 * DownstreamUnavailableError (retriable), anything else as the refusal it is.
 */
function searchHits<S>(item: MsearchResponseItem<S> | undefined): SearchHit<S>[] {
  if (item === undefined) throw new DownstreamUnavailableError('elasticsearch: no _msearch answer');
  if (!('error' in item)) return item.hits.hits;
  const reason = `${item.status} ${item.error.type}: ${item.error.reason ?? ''}`;
  if (item.status === 429 || item.status >= 500) {
    throw new DownstreamUnavailableError(`elasticsearch: ${reason}`, { status: item.status });
  }
  throw new Error(`elasticsearch refused a recall search: ${reason}`);
}
