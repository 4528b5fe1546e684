import type { Client } from '@elastic/elasticsearch';
import type { Embedder, LlmClient } from '@engram/ai';
import type { RankingConfig, RecallStoreWriter } from '@engram/core';
import { sqliteStoreWriter, type SqliteRetrievalStore } from '@engram/embedded';
import {
  BulkWriter,
  DEFAULT_BULK_LIMITS,
  elasticsearchStoreWriter,
  elasticsearchToolCallWriter,
  type AccessCounterMirror,
  type BulkLimits,
  type ElasticsearchIndexNames,
} from '@engram/elasticsearch';
import type { PublishTombstones } from './feedback.service';
import {
  indexMemoryWith,
  recallStackOn,
  unindexMemoryWith,
  type RecallStack,
} from './recall-stack';
import { elasticsearchRecallStore, type RecallStore } from './recall-store';
import type { PublishRecords } from './remember.service';
import { RetrievalIndexer, type ToolCallIndex } from './retrieval-indexer';
import { supersessionCandidatesIn } from './supersession-index';

/**
 * The store retrieval runs on, chosen by the mode (the only thing that differs between them): the
 * Elasticsearch indices (distributed) or the SQLite retrieval store (embedded). The indexer's
 * topology and the recall stack are written once against it.
 */
export interface RetrievalBackend {
  /** What recall reads, and where supersession looks for a memory's older versions. */
  readonly store: RecallStore;
  /** Where the indexer, Remember and Feedback write, by explicit id. */
  readonly writer: RecallStoreWriter;
  /**
   * Where tool calls are kept for the friction report. null on SQLite: it has no tool-call
   * table, the embedded friction report reads the tool calls from the log itself.
   */
  readonly toolCalls: ToolCallIndex | null;
  /** Makes a write visible to the next search (Elasticsearch refreshes); absent: it already is. */
  readonly refresh?: () => Promise<unknown>;
  /** Where it writes, for the log. */
  readonly description: string;
}

/** The SQLite retrieval store (whoever opened it closes it). */
export function sqliteBackend(store: SqliteRetrievalStore): RetrievalBackend {
  return {
    store,
    writer: sqliteStoreWriter(store),
    toolCalls: null,
    description: store.path,
  };
}

export interface ElasticsearchBackendOptions {
  /** Bulk request limits of the writes (default DEFAULT_BULK_LIMITS). */
  bulk?: BulkLimits;
  /** Access counters held in memory (a long-running server's); absent: read each time. */
  counters?: AccessCounterMirror | null;
  /** The tool-call index the indexer writes (absent: tool calls are not kept). */
  toolCallIndex?: string;
}

/** The three indices of `client` (and their access counters); the client stays the caller's. */
export function elasticsearchBackend(
  client: Client,
  indices: ElasticsearchIndexNames,
  options: ElasticsearchBackendOptions = {},
): RetrievalBackend {
  const writer = BulkWriter.forClient(client, options.bulk ?? DEFAULT_BULK_LIMITS);
  return {
    store: elasticsearchRecallStore(client, indices, { counters: options.counters ?? null }),
    writer: elasticsearchStoreWriter(writer, indices),
    toolCalls:
      options.toolCallIndex === undefined
        ? null
        : elasticsearchToolCallWriter(writer, options.toolCallIndex),
    refresh: () => client.indices.refresh({ index: indices.memories }),
    description: [
      ...Object.values(indices),
      ...(options.toolCallIndex ? [options.toolCallIndex] : []),
    ].join(', '),
  };
}

export interface RecallStackOptions {
  /** Elasticsearch (distributed) or the SQLite retrieval store (embedded). */
  backend: RetrievalBackend;
  /** The model the indexer embeds with (a query must be embedded by the same). */
  embedder: Embedder;
  /** EngramConfig.ranking (tests: DEFAULT_RANKING_CONFIG). */
  ranking: RankingConfig;
  /** The event log Remember publishes to (absent: Remember answers FAILED_PRECONDITION). */
  publish?: PublishRecords | null;
  /** Feedback's tombstones (publishTombstonesTo); absent: deleting answers FAILED_PRECONDITION. */
  publishTombstones?: PublishTombstones | null;
  /** The LLM of HyDE (hydeClientOf); absent: recall never uses HyDE. */
  hyde?: LlmClient | null;
}

/**
 * The recall services on a backend (shared by gRPC, `engram recall` and the embedded services),
 * with access tracking writing back to it.
 */
export function createRecallStack(options: RecallStackOptions): RecallStack {
  const { backend, embedder } = options;
  // Remember and Feedback index at once: with supersession, so a person's newer fact demotes the
  // one it contradicts before the log's consumer gets there (nothing injects the older meanwhile).
  const indexer = new RetrievalIndexer(
    embedder,
    backend.writer,
    supersessionCandidatesIn(backend.store),
  );
  return recallStackOn(
    backend.store,
    embedder,
    options.ranking,
    {
      publish: options.publish,
      publishTombstones: options.publishTombstones,
      // The next search sees the write.
      indexMemory: indexMemoryWith(indexer, backend.refresh),
      unindexMemory: unindexMemoryWith(indexer, backend.refresh),
    },
    options.hyde ?? null,
  );
}
