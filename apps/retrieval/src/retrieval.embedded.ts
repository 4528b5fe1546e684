import { createEmbedder, type Embedder, type LlmClient } from '@engram/ai';
import {
  errorMessage,
  MisconfigurationError,
  type BackoffOptions,
  type RankingConfig,
} from '@engram/core';
import {
  EmbeddedSinkConsumer,
  SqliteRetrievalStore,
  sqliteStoreWriter,
  type SqliteEventLog,
} from '@engram/embedded';
import { Logger } from '@nestjs/common';
import { CachingEmbedder } from './caching-embedder';
import type { PublishTombstones } from './feedback.service';
import {
  indexMemoryWith,
  recallStackOn,
  unindexMemoryWith,
  type RecallStack,
} from './recall-stack';
import type { PublishRecords } from './remember.service';
import type { RecallStore } from './recall-store';
import { RetrievalIndexer } from './retrieval-indexer';
import { supersessionCandidatesIn } from './supersession-index';
import { DEFAULT_INDEXER_GROUP_ID, retrievalCodecs } from './retrieval.runtime';
import { DEFAULT_RETRIEVAL_TOPICS, type RetrievalTopics } from './retrieval-topics';

// The review queue of the embedded store, for `engram hook`'s SessionStart count (issue #20).
export { ReviewQueueService } from './review-queue.service';

// Retrieval in embedded mode (SPEC §2): the distributed indexer's RetrievalIndexer — same plans,
// same document builders, same embedding — writing into the SQLite retrieval store instead of
// Elasticsearch, fed from the embedded log; and RecallService reading that store.

/**
 * The embedder of a machine without the model: no vectors at all. Documents are indexed without
 * one (BM25 finds them; `engram reindex` embeds them later), and a query's empty vector makes
 * the store search lexically only.
 */
export const LEXICAL_ONLY_EMBEDDER: Embedder = {
  id: 'none',
  dims: 0,
  embed: (texts) => Promise.resolve(texts.map(() => new Float32Array(0))),
};

/**
 * The local MiniLM model if it is installed (`npm run models:setup`), else the lexical-only
 * embedder, said once in the log: embedded mode must work on a fresh machine (`npx engram demo`
 * right after `npm ci`), where recall then runs on BM25 alone.
 */
export async function embeddedEmbedder(
  logger: { warn(message: string): void } = new Logger('Retrieval'),
): Promise<Embedder> {
  try {
    return await createEmbedder();
  } catch (error) {
    if (!(error instanceof MisconfigurationError)) throw error;
    logger.warn(`recall runs on BM25 only (no kNN): ${errorMessage(error)}`);
    return LEXICAL_ONLY_EMBEDDER;
  }
}

/** The SQLite store through the port RecallService reads (same shapes as Elasticsearch's). */
export function sqliteRecallStore(store: SqliteRetrievalStore): RecallStore {
  return store;
}

/** The recall services on the embedded store, with access tracking writing back to it. */
export function createEmbeddedRecallStack(options: {
  store: SqliteRetrievalStore;
  embedder: Embedder;
  /** EngramConfig.ranking (tests: DEFAULT_RANKING_CONFIG). */
  ranking: RankingConfig;
  /** The event log Remember publishes to (absent: Remember answers FAILED_PRECONDITION). */
  publish?: PublishRecords | null;
  /** Feedback's tombstones (publishTombstonesTo); absent: deleting answers FAILED_PRECONDITION. */
  publishTombstones?: PublishTombstones | null;
  /** The LLM of HyDE (hydeClientOf); absent: recall never uses HyDE. */
  hyde?: LlmClient | null;
}): RecallStack {
  const { store, embedder } = options;
  // Remember and Feedback index at once: with supersession, so a person's newer fact demotes the
  // one it contradicts before the log's consumer gets there (nothing injects the older meanwhile).
  const indexer = new RetrievalIndexer(
    embedder,
    sqliteStoreWriter(store),
    supersessionCandidatesIn(sqliteRecallStore(store)),
  );
  return recallStackOn(
    sqliteRecallStore(store),
    embedder,
    options.ranking,
    {
      publish: options.publish,
      publishTombstones: options.publishTombstones,
      indexMemory: indexMemoryWith(indexer),
      unindexMemory: unindexMemoryWith(indexer),
    },
    options.hyde ?? null,
  );
}

// ---- the embedded indexer ----

export interface EmbeddedRetrievalOptions {
  log: SqliteEventLog;
  dataDir: string;
  /** The model stored beside every vector; LEXICAL_ONLY_EMBEDDER indexes without vectors. */
  embedder: Embedder;
  topics?: RetrievalTopics;
  groupId?: string;
  partitions?: number;
  retry?: BackoffOptions;
  /** The recall stack's ranking: EngramConfig.ranking (tests: DEFAULT_RANKING_CONFIG). */
  ranking: RankingConfig;
}

export interface EmbeddedRetrieval {
  store: SqliteRetrievalStore;
  indexer: RetrievalIndexer;
  consumer: EmbeddedSinkConsumer;
  groupId: string;
  /** The topics it consumes: `replay --wait` waits for them. */
  inputs: string[];
  /** RecallService on the same store (and so the same process's vector cache). */
  recall: RecallStack;
  /** The model the indexer embeds with (a query must be embedded by the same). */
  embedder: Embedder;
  stop(): Promise<void>;
}

/**
 * The retrieval indexer on the embedded log: memories (tombstones delete), episodes (tombstones
 * delete) and user prompts into the SQLite store in `dataDir`, with the same consumer group name
 * as distributed mode. Also returns a RecallService on that store for in-process callers.
 */
export function startEmbeddedRetrieval(options: EmbeddedRetrievalOptions): EmbeddedRetrieval {
  const { log } = options;
  const topics = options.topics ?? DEFAULT_RETRIEVAL_TOPICS;
  const groupId = options.groupId ?? DEFAULT_INDEXER_GROUP_ID;
  const partitions = options.partitions ?? 3;
  log.ensureTopic(topics.memories, partitions, { compacted: true, withDeadLetter: true });
  log.ensureTopic(topics.episodes, partitions, { compacted: true, withDeadLetter: true });
  log.ensureTopic(topics.prompts, partitions, { withDeadLetter: true });
  const store = SqliteRetrievalStore.open({ dataDir: options.dataDir });
  const embedder = new CachingEmbedder(options.embedder);
  const supersession = supersessionCandidatesIn(sqliteRecallStore(store));
  const indexer = new RetrievalIndexer(embedder, sqliteStoreWriter(store), supersession);
  const codecs = retrievalCodecs(topics);
  const consumer = new EmbeddedSinkConsumer(log, {
    groupId,
    service: 'retrieval',
    retry: options.retry ?? { initialMs: 200, maxMs: 30_000 },
  })
    .subscribe(codecs.memories, indexer.handleMemories, { tombstones: true })
    .subscribe(codecs.episodes, indexer.handleEpisodes, { tombstones: true })
    // Without tombstones every item is an event (a null value is dead-lettered as poison).
    .subscribe(codecs.prompts, (items) => indexer.handlePrompts(items));
  void consumer.start();
  const recall = createEmbeddedRecallStack({
    store,
    embedder: options.embedder,
    ranking: options.ranking,
  });
  new Logger('Retrieval').log(
    `indexing ${Object.values(topics).join(', ')} into ${store.path} with ${
      embedder.dims > 0 ? embedder.id : 'no embedding model (BM25 only)'
    } (group ${groupId})`,
  );
  return {
    store,
    indexer,
    consumer,
    groupId,
    inputs: [topics.memories, topics.episodes, topics.prompts],
    recall,
    embedder: options.embedder,
    async stop() {
      await consumer.stop();
      await recall.access.close().catch(() => undefined);
      store.close();
    },
  };
}
