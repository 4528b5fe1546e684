import type { AccessUpdate } from '../retrieval/access-batcher';
import type { ModelVector } from '../retrieval/model-vector';
import type { RecallScope } from '../retrieval/recall-scope';
import type { RecallTier } from '../retrieval/recall-request';
import type { RankedHit } from '../retrieval/rrf';
import type { SessionActivity } from '../retrieval/temporal';

// The RecallStore port: what recall and the rpcs beside it read from the retrieval tiers. It
// speaks core's types — a scope, and a small filter algebra over the fields of the retrieval
// documents — and each adapter compiles them to its own language (Elasticsearch query DSL,
// SQLite SQL). The filters are the ones the callers build (recall-store.filters.ts).

/** Keyword fields a filter compares with `term`/`terms` (any value of an array field counts). */
export type StoreKeywordField =
  | 'memoryType'
  | 'scope'
  | 'source'
  | 'sessionId'
  | 'provenanceSessionIds'
  | 'relatedFiles'
  | 'memoryId'
  | 'episodeId'
  /** Episodes: the thread they belong to. */
  | 'threadId'
  /** Memories: the items of their unit of work (WorkUnitRef.hierarchy, a nested field). */
  | 'workUnitRef.hierarchy';

/** Numeric fields a filter bounds: epoch millis, and the stored confidence. */
export type StoreRangeField = 'createdAt' | 'startedAt' | 'endedAt' | 'timestamp' | 'confidence';

/** Fields a document may lack (stale memories carry `staleAt`, closed episodes `endedAt`). */
export type StoreOptionalField = 'staleAt' | 'endedAt';

/** Boolean fields of memories (a missing one is false). */
export type StoreFlagField = 'needsReview' | 'userVerified';

/**
 * One filter of a store query. Every filter of a query must hold; `any` needs one of its
 * filters, `all` every one (for a conjunction inside an `any`).
 */
export type StoreFilter =
  /** The field has this value. */
  | { readonly kind: 'term'; readonly field: StoreKeywordField; readonly value: string }
  /** The field has one of the values (an empty list matches nothing). */
  | {
      readonly kind: 'terms';
      readonly field: StoreKeywordField;
      readonly values: readonly string[];
    }
  /** A value of the field within the bounds (inclusive); at least one bound. */
  | {
      readonly kind: 'range';
      readonly field: StoreRangeField;
      readonly gte?: number;
      readonly lte?: number;
    }
  /** The field has no value (missing, null or an empty list). */
  | { readonly kind: 'missing'; readonly field: StoreOptionalField }
  /** The boolean field is `value` (missing counts as false). */
  | { readonly kind: 'flag'; readonly field: StoreFlagField; readonly value: boolean }
  | { readonly kind: 'all'; readonly filters: readonly StoreFilter[] }
  | { readonly kind: 'any'; readonly filters: readonly StoreFilter[] };

/** One tier's candidate search. */
export interface StoreCandidateQuery {
  /** Tenant and project: on every query, never optional (SPEC §11). */
  scope: RecallScope;
  /** What BM25 matches against the document text; null: no BM25 list (kNN only). */
  text: string | null;
  /**
   * The query embedding with its model (kNN compares only vectors of that model and dimension);
   * null: lexical only (no kNN list).
   */
  vector: ModelVector | null;
  /** Applied to both lists (kNN: as a pre-filter, so k stays k). */
  filter: readonly StoreFilter[];
  /** Candidates per list (k). */
  size: number;
  /** kNN neighbours less similar than this (raw cosine) are not candidates. */
  minSimilarity?: number;
}

export interface StoreCandidates<S> {
  bm25: RankedHit[];
  /** null when no kNN search ran. */
  knn: RankedHit[] | null;
  /** The stored document of every candidate of either list, by id. */
  sources: Map<string, S>;
}

/** A filtered listing without a query text. */
export interface StoreListQuery {
  scope: RecallScope;
  filter: readonly StoreFilter[];
  size: number;
}

/** A listed document: its id and stored document, newest first. */
export interface StoreListed<S> {
  id: string;
  source: S;
}

/** What recall needs from the store: the seam between RecallService and a store adapter. */
export interface RecallStore {
  /** BM25 and kNN candidates of one tier (where a tier lives is the store's business). */
  candidates<S>(tier: RecallTier, query: StoreCandidateQuery): Promise<StoreCandidates<S>>;
  /** The episodes each turn (by eventId) belongs to, for the turns' provenance. */
  episodesOfTurns(scope: RecallScope, eventIds: string[]): Promise<Map<string, string[]>>;
  /** Latest activity of the most recently active sessions of a project. */
  recentSessions(scope: RecallScope, n: number): Promise<SessionActivity[]>;
  /** Applies access-count updates to the memories; returns those to retry. */
  writeAccess(updates: AccessUpdate[]): Promise<{ failed: AccessUpdate[] }>;
  /**
   * Documents of a tier matching the filter, newest `timestamp` first (ties: eventId, then id),
   * at most `size`.
   */
  list<S>(tier: RecallTier, query: StoreListQuery): Promise<StoreListed<S>[]>;
}

// ---- the write side: what the indexer asks of a store ----

/** An idempotent write by explicit id: `upsert` replaces the tier's document, `delete` removes it. */
export type StoreWrite =
  | {
      readonly action: 'upsert';
      readonly tier: RecallTier;
      readonly id: string;
      readonly document: object;
    }
  | { readonly action: 'delete'; readonly tier: RecallTier; readonly id: string };

export interface StoreWriteReport {
  /** Round trips to the store. */
  requests: number;
  indexed: number;
  deleted: number;
  /** Deletes of documents that were not there (a replayed tombstone): success. */
  alreadyAbsent: number;
}

/**
 * The indexer's side of the store. `write` applies the writes in order and returns only when
 * every one was applied; otherwise it throws a classified error (DownstreamUnavailableError:
 * retry; a rejected document: dead-letter). Every write is idempotent.
 */
export interface RecallStoreWriter {
  write(writes: readonly StoreWrite[]): Promise<StoreWriteReport>;
  /**
   * Where a store keeps the memories' access counters apart (Elasticsearch): removes those of
   * deleted memories, so a memory re-created under the same id starts uncounted. Absent: the
   * counters go with the memory.
   */
  deleteAccessCounters?(memoryIds: readonly string[]): Promise<StoreWriteReport>;
}
