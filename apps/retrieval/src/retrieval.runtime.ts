import type { Embedder } from '@engram/ai';
import type { BackoffOptions, IdleMergePolicy } from '@engram/core';
import {
  BulkWriter,
  elasticsearchStoreWriter,
  createElasticsearchClient,
  DEFAULT_BULK_LIMITS,
  elasticsearchToolCallWriter,
  ensureRetrievalIndices,
  ensureToolCallIndex,
  IdleMerger,
  toolCallIndexName,
  retrievalIndexNames,
  type BulkLimits,
  type IndexSetupOutcome,
  type ElasticsearchIndexNames,
} from '@engram/elasticsearch';
import {
  AvroRegistry,
  contractCodec,
  createKafka,
  DeadLetterWriter,
  ensureTopics,
  ReliableConsumer,
  valueSubject,
  type TopicCodec,
} from '@engram/kafka';
import type { Client } from '@elastic/elasticsearch';
import { Logger } from '@nestjs/common';
import type { Kafka } from 'kafkajs';
import { CachingEmbedder } from './caching-embedder';
import { elasticsearchRecallStore } from './recall-store';
import { RetrievalIndexer } from './retrieval-indexer';
import { supersessionCandidatesIn } from './supersession-index';
import { DEFAULT_RETRIEVAL_TOPICS, type RetrievalTopics } from './retrieval-topics';

export interface RetrievalIndexerOptions {
  brokers: string[];
  registryUrl: string;
  elasticsearchUrl: string;
  /** The model whose id and dimension are stored beside every vector. */
  embedder: Embedder;
  topics?: RetrievalTopics;
  /** Prefix of the three index names (lowercased); default none: `engram-memories`, … */
  indexPrefix?: string;
  groupId?: string;
  clientId?: string;
  /** Partitions of input topics this service has to create (existing ones are left alone). */
  partitions?: number;
  retry?: BackoffOptions;
  /** ENGRAM_KAFKA_SESSION_TIMEOUT_MS: how soon a crashed instance's partitions move. */
  sessionTimeoutMs?: number;
  bulk?: BulkLimits;
  /** Texts per embedding call. */
  embedBatchSize?: number;
  /** Where a new consumer group starts (default: the beginning — an index is a full projection). */
  fromBeginning?: boolean;
  /** Merging each quiet index to one segment (faster kNN); false: never (default: on). */
  idleMerge?: IdleMergePolicy | false;
}

export interface RetrievalIndexerRuntime {
  kafka: Kafka;
  client: Client;
  indices: ElasticsearchIndexNames;
  /** The tool-call index (retrieval-tool-calls.ts: the friction report's reads). */
  toolCallIndex: string;
  topics: RetrievalTopics;
  groupId: string;
  setup: IndexSetupOutcome;
  indexer: RetrievalIndexer;
  consumer: ReliableConsumer;
  /** null when idle merging is off. */
  merger: IdleMerger | null;
  stop(): Promise<void>;
}

export const DEFAULT_INDEXER_GROUP_ID = 'engram-retrieval-indexer';

/** A contract codec moved onto another topic name (tests and prefixes use their own topics). */
function onTopic<E>(codec: TopicCodec<E>, topic: string): TopicCodec<E> {
  return { ...codec, topic, subject: valueSubject(topic) };
}

/** The codecs the indexer reads with: the contract codecs, on the configured topic names. */
export function retrievalCodecs(topics: RetrievalTopics) {
  return {
    memories: onTopic(contractCodec('memory.memories.v1'), topics.memories),
    episodes: onTopic(contractCodec('memory.episodes.v1'), topics.episodes),
    prompts: onTopic(contractCodec('agent.prompts.v1'), topics.prompts),
    toolCalls: onTopic(contractCodec('agent.tool-calls.v1'), topics.toolCalls),
  };
}

/**
 * Routes the four input topics to the indexer. The two compacted topics take tombstones: a null
 * value reaches the handler with its key and deletes that document. On agent.prompts.v1 and
 * agent.tool-calls.v1 a null value stays poison (dead-lettered as a DecodeError).
 */
export function subscribeIndexer(
  consumer: ReliableConsumer,
  topics: RetrievalTopics,
  indexer: RetrievalIndexer,
): ReliableConsumer {
  const codecs = retrievalCodecs(topics);
  return consumer
    .subscribe(codecs.memories, indexer.handleMemories, { tombstones: true })
    .subscribe(codecs.episodes, indexer.handleEpisodes, { tombstones: true })
    .subscribe(codecs.prompts, indexer.handlePrompts)
    .subscribe(codecs.toolCalls, indexer.handleToolCalls);
}

/**
 * Starts the retrieval indexer: input topics and the indices in place (idempotent), then an
 * at-least-once ReliableConsumer on memories, episodes and prompts that embeds and bulk-indexes,
 * and on tool calls, written without embedding into the tool-call index (the friction report's).
 * Offsets are committed only after Elasticsearch applied the batch; an outage pauses the
 * partition and retries with backoff, never skipping. Stop drains the batch in hand and commits.
 */
export async function startRetrievalIndexer(
  options: RetrievalIndexerOptions,
): Promise<RetrievalIndexerRuntime> {
  const logger = new Logger('RetrievalIndexer');
  const topics = options.topics ?? DEFAULT_RETRIEVAL_TOPICS;
  const groupId = options.groupId ?? DEFAULT_INDEXER_GROUP_ID;
  const indices = retrievalIndexNames(options.indexPrefix ?? '');
  const toolCallIndex = toolCallIndexName(options.indexPrefix ?? '');
  const kafka = createKafka({ brokers: options.brokers, clientId: options.clientId ?? groupId });
  const client = createElasticsearchClient(options.elasticsearchUrl);
  let deadLetters: DeadLetterWriter | undefined;
  try {
    const setup = await ensureRetrievalIndices(client, indices, { dims: options.embedder.dims });
    await ensureToolCallIndex(client, toolCallIndex);
    const partitions = options.partitions ?? 3;
    await ensureTopics(kafka, [
      { topic: topics.memories, partitions, compacted: true },
      { topic: topics.episodes, partitions, compacted: true },
      { topic: topics.prompts, partitions },
      { topic: topics.toolCalls, partitions },
    ]);

    const embedder = new CachingEmbedder(options.embedder, { batchSize: options.embedBatchSize });
    const writer = BulkWriter.forClient(client, options.bulk ?? DEFAULT_BULK_LIMITS);
    const indexer = new RetrievalIndexer(
      embedder,
      elasticsearchStoreWriter(writer, indices),
      supersessionCandidatesIn(elasticsearchRecallStore(client, indices)),
      elasticsearchToolCallWriter(writer, toolCallIndex),
    );
    deadLetters = new DeadLetterWriter(kafka, 'retrieval');
    await deadLetters.connect();
    const consumer = subscribeIndexer(
      new ReliableConsumer(kafka, new AvroRegistry(options.registryUrl), deadLetters, {
        groupId,
        retry: options.retry ?? { initialMs: 200, maxMs: 30_000 },
        ...(options.sessionTimeoutMs !== undefined && {
          sessionTimeoutMs: options.sessionTimeoutMs,
        }),
        fromBeginning: options.fromBeginning ?? true,
      }),
      topics,
      indexer,
    );
    await consumer.start();
    const merger =
      options.idleMerge === false
        ? null
        : new IdleMerger(client, Object.values(indices), {
            ...(options.idleMerge && { policy: options.idleMerge }),
            log: (line) => logger.log(line),
          });
    merger?.start();
    logger.log(
      `indexing ${Object.values(topics).join(', ')} into ${[...Object.values(indices), toolCallIndex].join(', ')} with ${embedder.id} (group ${groupId})`,
    );

    const writerOfDeadLetters = deadLetters;
    return {
      kafka,
      client,
      indices,
      toolCallIndex,
      topics,
      groupId,
      setup,
      indexer,
      consumer,
      merger,
      async stop() {
        merger?.stop();
        await consumer.stop();
        await writerOfDeadLetters.disconnect();
        await client.close();
      },
    };
  } catch (error) {
    await deadLetters?.disconnect().catch(() => undefined);
    await client.close().catch(() => undefined);
    throw error;
  }
}
