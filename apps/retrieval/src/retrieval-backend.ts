import type { Embedder, LlmClient } from '@engram/ai';
import type { RankingConfig, RecallStoreWriter } from '@engram/core';
import type { PublishTombstones } from './feedback.service';
import {
  indexMemoryWith,
  recallStackOn,
  unindexMemoryWith,
  type RecallStack,
} from './recall-stack';
import type { RecallStore } from './recall-store';
import type { PublishRecords } from './remember.service';
import { RetrievalIndexer, type ToolCallIndex } from './retrieval-indexer';
import { supersessionCandidatesIn } from './supersession-index';

/**
 * The store retrieval runs on, chosen by the mode (the only thing that differs between them): the
 * Elasticsearch indices (distributed: elasticsearchBackend) or the SQLite retrieval store
 * (embedded: sqliteBackend). The indexer's topology and the recall stack are written once
 * against it, and import neither provider.
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
