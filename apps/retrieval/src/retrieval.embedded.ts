import { createEmbedder, type Embedder, type LlmClient } from '@engram/ai';
import type { PromptSubmitted } from '@engram/contracts';
import {
  backoffDelayMs,
  deadLetterHeaders,
  deadLetterTopic,
  errorMessage,
  MisconfigurationError,
  retryUntilSettled,
  type BackoffOptions,
  type Delivered,
  type RankingConfig,
  type TopicCodec,
} from '@engram/core';
import {
  decodeEvent,
  SqliteRetrievalStore,
  sqliteStoreWriter,
  watchEmbeddedConsumer,
  type AppendRecord,
  type LogRecord,
  type SqliteEventLog,
} from '@engram/embedded';
import type { DeliveredOrTombstone } from '@engram/kafka';
import { processMetrics } from '@engram/metrics';
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

// ---- an at-least-once consumer of the embedded log, tombstones included ----

interface SinkRoute {
  codec: TopicCodec<unknown>;
  handle: (items: DeliveredOrTombstone<unknown>[]) => Promise<void>;
  tombstones: boolean;
}

/** A record the sink could not take, and why. */
interface SinkDeadLetter {
  record: LogRecord;
  error: unknown;
}

interface SinkOptions {
  groupId: string;
  retry: BackoffOptions;
  maxBatchRecords?: number;
  pollIntervalMs?: number;
}

/**
 * The embedded twin of libs/kafka's ReliableConsumer, for a sink outside the log (the retrieval
 * store): read a partition's batch after the group's offset, hand it to the handler, and commit
 * the offset only after the handler returned — at-least-once, the writes being idempotent
 * upserts by id. EmbeddedExactlyOnceProcessor is not used because it dead-letters tombstones,
 * and on the compacted memory and episode topics a tombstone is a deletion. Retriable failures
 * back off and retry the batch; a batch that fails for good is retried record by record and
 * the failing record dead-lettered with its reason (SPEC §11), never skipped silently.
 */
export class EmbeddedSinkConsumer {
  private readonly logger = new Logger(EmbeddedSinkConsumer.name);
  private readonly routes = new Map<string, SinkRoute>();
  private readonly positions = new Map<string, number[]>();
  private readonly waiters = new Set<() => void>();
  private loops: Promise<void>[] = [];
  private running = false;
  private stopWatch?: () => void;
  private stopMetrics?: () => void;
  readonly counters = { processed: 0, deadLettered: 0, retries: 0 };

  constructor(
    private readonly log: SqliteEventLog,
    private readonly options: SinkOptions,
  ) {}

  /** `tombstones`: a null value deletes its key (compacted topics); elsewhere it is poison. */
  subscribe<E>(
    codec: TopicCodec<E>,
    handle: (items: DeliveredOrTombstone<E>[]) => Promise<void>,
    tombstones: boolean,
  ): this {
    this.routes.set(codec.topic, { codec, handle, tombstones } as unknown as SinkRoute);
    return this;
  }

  start(): void {
    for (const topic of this.routes.keys()) {
      const info = this.log.topic(topic);
      if (!info) throw new MisconfigurationError(`cannot consume ${topic}: it does not exist`);
      if (!this.log.topic(deadLetterTopic(topic))) this.log.ensureTopic(deadLetterTopic(topic), 1);
      const committed = this.log.committedOffsets(this.options.groupId, topic);
      this.positions.set(
        topic,
        Array.from({ length: info.partitions }, (_, p) => committed.get(p) ?? 0),
      );
    }
    this.running = true;
    this.stopWatch = this.log.onAppend((topic) => {
      if (this.routes.has(topic)) this.wakeUp();
    });
    const { groupId } = this.options;
    this.stopMetrics = watchEmbeddedConsumer(this.log, groupId, this.positions, () => this.running);
    this.loops = [...this.routes.values()].map((route) => this.pollLoop(route));
  }

  /** Stops polling; the batch in hand finishes (and commits) first. */
  async stop(): Promise<void> {
    this.running = false;
    this.stopWatch?.();
    this.stopMetrics?.();
    this.wakeUp();
    await Promise.all(this.loops);
  }

  private async pollLoop(route: SinkRoute): Promise<void> {
    const positions = this.positions.get(route.codec.topic)!;
    let failures = 0;
    while (this.running) {
      let busy = false;
      for (let partition = 0; partition < positions.length && this.running; partition += 1) {
        try {
          busy = (await this.pollPartition(route, partition, positions)) || busy;
          failures = 0;
        } catch (error) {
          // The log itself failed (nothing was committed): read the same records after a pause.
          const delay = backoffDelayMs(failures++, this.options.retry);
          this.logger.error(`${route.codec.topic}[${partition}]: ${errorMessage(error)}`);
          await this.idle(delay);
        }
      }
      if (!busy) await this.idle(this.options.pollIntervalMs ?? 100);
    }
  }

  private async pollPartition(
    route: SinkRoute,
    partition: number,
    positions: number[],
  ): Promise<boolean> {
    const records = this.log.read(
      route.codec.topic,
      partition,
      positions[partition],
      this.options.maxBatchRecords ?? 500,
    );
    if (records.length === 0) return false;
    const batchDone = processMetrics().startBatch(this.options.groupId, route.codec.topic);
    try {
      return await this.processBatch(route, partition, positions, records);
    } finally {
      batchDone();
    }
  }

  private async processBatch(
    route: SinkRoute,
    partition: number,
    positions: number[],
    records: LogRecord[],
  ): Promise<boolean> {
    const letters: SinkDeadLetter[] = [];
    const items: { record: LogRecord; item: DeliveredOrTombstone<unknown> }[] = [];
    for (const record of records) {
      try {
        items.push({ record, item: delivered(route, record) });
      } catch (error) {
        letters.push({ record, error });
      }
    }
    const settled = await this.handle(route, items, letters);
    if (!settled) return false; // stopping: nothing committed, the batch comes again
    const next = records[records.length - 1].offset + 1;
    const topic = route.codec.topic;
    this.log.transaction(() => {
      if (letters.length > 0) {
        this.log.append(
          deadLetterTopic(topic),
          letters.map((letter) => this.deadLetter(letter)),
        );
      }
      this.log.commitOffsets(this.options.groupId, topic, new Map([[partition, next]]));
    });
    positions[partition] = next;
    this.recordCommitted(topic, items.length, letters);
    return true;
  }

  private recordCommitted(topic: string, processed: number, letters: SinkDeadLetter[]): void {
    this.counters.processed += processed;
    this.counters.deadLettered += letters.length;
    const metrics = processMetrics();
    metrics.recordConsumed(this.options.groupId, topic, processed);
    for (const { error } of letters) metrics.recordDeadLetter(this.options.groupId, topic, error);
  }

  /** The batch, else record by record; failing records join `letters`. False: stopped. */
  private async handle(
    route: SinkRoute,
    items: { record: LogRecord; item: DeliveredOrTombstone<unknown> }[],
    letters: SinkDeadLetter[],
  ): Promise<boolean> {
    if (items.length === 0) return true;
    const whole = await this.retry(route, items);
    if (whole.kind !== 'dead-letter') return whole.kind === 'done';
    for (const one of items) {
      const single = await this.retry(route, [one]);
      if (single.kind === 'stopped') return false;
      if (single.kind === 'dead-letter') letters.push({ record: one.record, error: single.error });
    }
    return true;
  }

  private retry(route: SinkRoute, items: { item: DeliveredOrTombstone<unknown> }[]) {
    const topic = route.codec.topic;
    return retryUntilSettled(
      () => route.handle(items.map(({ item }) => item)),
      {
        shouldContinue: () => this.running,
        heartbeat: () => Promise.resolve(),
        onRetry: (error, attempt, delayMs) => {
          this.counters.retries += 1;
          this.logger.warn(
            `${topic}: retry ${attempt + 1} in ${delayMs} ms: ${errorMessage(error)}`,
          );
        },
      },
      this.options.retry,
      5,
    );
  }

  private deadLetter({ record, error }: SinkDeadLetter): AppendRecord {
    const source = {
      topic: record.topic,
      partition: record.partition,
      offset: String(record.offset),
    };
    return {
      key: record.key,
      value: record.value,
      headers: deadLetterHeaders(error, source, 'retrieval', new Date()),
    };
  }

  private idle(ms: number): Promise<void> {
    if (!this.running) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.waiters.add(done);
    });
  }

  private wakeUp(): void {
    for (const waiter of [...this.waiters]) waiter();
  }
}

/** A record as the handler sees it: a decoded event, or (on compacted topics) a deletion. */
function delivered(route: SinkRoute, record: LogRecord): DeliveredOrTombstone<unknown> {
  if (record.value !== null || !route.tombstones) return decodeEvent(route.codec, record);
  if (!record.key) {
    throw new MisconfigurationError(`tombstone at offset ${record.offset} has no key`);
  }
  return {
    event: null,
    topic: record.topic,
    partition: record.partition,
    offset: String(record.offset),
    key: record.key,
    headers: record.headers,
  };
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
    retry: options.retry ?? { initialMs: 200, maxMs: 30_000 },
  })
    .subscribe(codecs.memories, indexer.handleMemories, true)
    .subscribe(codecs.episodes, indexer.handleEpisodes, true)
    // Without tombstones every item is an event (a null value is dead-lettered as poison).
    .subscribe(
      codecs.prompts,
      (items) => indexer.handlePrompts(items as Delivered<PromptSubmitted>[]),
      false,
    );
  consumer.start();
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
