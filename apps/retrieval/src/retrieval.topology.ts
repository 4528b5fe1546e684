import type { Embedder } from '@engram/ai';
import {
  codecOnTopic,
  contractCodec,
  DEFAULT_STAGE_RETRY,
  type BackoffOptions,
  type RankingConfig,
  type SinkConsumer,
  type StreamPlatform,
  type StreamTopic,
} from '@engram/core';
import { Logger } from '@nestjs/common';
import { CachingEmbedder } from './caching-embedder';
import type { RecallStack } from './recall-stack';
import { createRecallStack, type RetrievalBackend } from './retrieval-backend';
import { RetrievalIndexer } from './retrieval-indexer';
import { DEFAULT_RETRIEVAL_TOPICS, type RetrievalTopics } from './retrieval-topics';
import { supersessionCandidatesIn } from './supersession-index';

export const DEFAULT_INDEXER_GROUP_ID = 'engram-retrieval-indexer';

/** The codecs the indexer reads with: the contract codecs, on the configured topic names. */
export function retrievalCodecs(topics: RetrievalTopics) {
  return {
    memories: codecOnTopic(contractCodec('memory.memories.v1'), topics.memories),
    episodes: codecOnTopic(contractCodec('memory.episodes.v1'), topics.episodes),
    prompts: codecOnTopic(contractCodec('agent.prompts.v1'), topics.prompts),
    toolCalls: codecOnTopic(contractCodec('agent.tool-calls.v1'), topics.toolCalls),
  };
}

/** The indexer's input topics, as it creates them when missing (the two entity topics compacted). */
export function retrievalTopics(topics: RetrievalTopics): StreamTopic[] {
  return [
    { topic: topics.memories, compacted: true },
    { topic: topics.episodes, compacted: true },
    { topic: topics.prompts },
    { topic: topics.toolCalls },
  ];
}

/**
 * Routes the four input topics to the indexer. The two compacted topics take tombstones: a null
 * value reaches the handler with its key and deletes that document. On agent.prompts.v1 and
 * agent.tool-calls.v1 a null value stays poison (dead-lettered as a DecodeError).
 */
export function subscribeIndexer<C extends SinkConsumer>(
  consumer: C,
  topics: RetrievalTopics,
  indexer: RetrievalIndexer,
): C {
  const codecs = retrievalCodecs(topics);
  consumer
    .subscribe(codecs.memories, indexer.handleMemories, { tombstones: true })
    .subscribe(codecs.episodes, indexer.handleEpisodes, { tombstones: true })
    .subscribe(codecs.prompts, indexer.handlePrompts)
    .subscribe(codecs.toolCalls, indexer.handleToolCalls);
  return consumer;
}

export interface RetrievalOptions {
  /** Kafka (distributed) or the SQLite log (embedded). */
  platform: StreamPlatform;
  /** Elasticsearch (distributed) or the SQLite retrieval store (embedded); stays open at stop. */
  backend: RetrievalBackend;
  /** The model whose id and dimension are stored beside every vector (none: BM25 only). */
  embedder: Embedder;
  topics?: RetrievalTopics;
  groupId?: string;
  /** Partitions of input topics this service has to create (existing ones are left alone). */
  partitions?: number;
  retry?: BackoffOptions;
  /** Texts per embedding call. */
  embedBatchSize?: number;
  /** Where a new consumer group starts (default: the beginning — an index is a full projection). */
  fromBeginning?: boolean;
}

export interface RunningRetrieval {
  indexer: RetrievalIndexer;
  consumer: SinkConsumer;
  groupId: string;
  topics: RetrievalTopics;
  /** The topics it consumes: `replay --wait` waits for this group's offsets on them. */
  inputs: string[];
  /** Drains the batch in hand and commits; the platform and the backend stay open. */
  stop(): Promise<void>;
}

/**
 * The retrieval indexer (SPEC §7), one definition for both modes: an at-least-once sink consumer
 * on memories and episodes (tombstones delete), user prompts (turns) and tool calls (kept where
 * the backend has a tool-call index), which embeds and writes by explicit id. Offsets are
 * committed only after the backend applied the batch; an outage retries with backoff, never
 * skipping. Consumer group and topics are the same in both modes.
 */
export async function startRetrieval(options: RetrievalOptions): Promise<RunningRetrieval> {
  const { platform, backend } = options;
  const topics = options.topics ?? DEFAULT_RETRIEVAL_TOPICS;
  const groupId = options.groupId ?? DEFAULT_INDEXER_GROUP_ID;
  await platform.ensureTopics(retrievalTopics(topics), options.partitions ?? 3);
  const embedder = new CachingEmbedder(options.embedder, { batchSize: options.embedBatchSize });
  const indexer = new RetrievalIndexer(
    embedder,
    backend.writer,
    supersessionCandidatesIn(backend.store),
    backend.toolCalls,
  );
  const consumer = subscribeIndexer(
    await platform.createSinkConsumer({
      groupId,
      service: 'retrieval',
      retry: options.retry ?? DEFAULT_STAGE_RETRY,
      fromBeginning: options.fromBeginning ?? true,
    }),
    topics,
    indexer,
  );
  await consumer.start();
  new Logger('RetrievalIndexer').log(
    `indexing ${Object.values(topics).join(', ')} into ${backend.description} with ${
      embedder.dims > 0 ? embedder.id : 'no embedding model (BM25 only)'
    } (group ${groupId})`,
  );
  return {
    indexer,
    consumer,
    groupId,
    topics,
    inputs: retrievalTopics(topics).map(({ topic }) => topic),
    stop: () => consumer.stop(),
  };
}

export interface RetrievalWithRecall extends RunningRetrieval {
  /** The recall services on the backend the indexer writes (and so on its vector cache). */
  recall: RecallStack;
  /** The model the indexer embeds with (a query must be embedded by the same). */
  embedder: Embedder;
}

/**
 * The indexer and the recall services on one backend, for a process that reads what it indexes
 * (`engram start`, `engram demo`, tests); `stop` also writes the pending access counts. The
 * backend stays open: whoever opened it closes it.
 */
export async function startRetrievalWithRecall(
  options: RetrievalOptions & { ranking: RankingConfig },
): Promise<RetrievalWithRecall> {
  const running = await startRetrieval(options);
  const recall = createRecallStack({
    backend: options.backend,
    embedder: options.embedder,
    ranking: options.ranking,
  });
  return {
    ...running,
    recall,
    embedder: options.embedder,
    async stop() {
      await running.stop();
      await recall.access.close().catch(() => undefined);
    },
  };
}
