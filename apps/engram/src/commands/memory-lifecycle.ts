import type { Client } from '@elastic/elasticsearch';
import type { Embedder } from '@engram/ai';
import { loadConfig } from '@engram/config';
import { TOPICS, type Memory, type Typed } from '@engram/contracts';
import {
  anyOfFilter,
  isLoggedTombstone,
  memoryHistory,
  memoryVersionChanges,
  partitionOfKey,
  type EventLogPort,
  type LoggedMemoryVersion,
  type MemoryHistoryEntry,
  type RankingConfig,
  type RecallStore,
  type StoreFilter,
  type TopicCodec,
} from '@engram/core';
import {
  createElasticsearchClient,
  retrievalIndexNames,
  tenantsWithProject,
} from '@engram/elasticsearch';
import { memoryFromSource, type MemoryDocument } from '@engram/core';
import { SqliteEventLog, SqliteEventLogAdapter, SqliteRetrievalStore } from '@engram/embedded';
import {
  AvroRegistry,
  codecOnTopic,
  contractCodec,
  createKafka,
  KafkaEventLog,
} from '@engram/kafka';
import {
  sqliteBackend,
  createRecallStack,
  elasticsearchBackend,
  LEXICAL_ONLY_EMBEDDER,
  publishTombstonesTo,
  type RecallStack,
} from '@engram/app-retrieval';
import { InvalidArgumentError } from 'commander';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/**
 * What the memory lifecycle commands (`engram memory history|prune`, the memory side of
 * `engram review`) work on, in either mode: the event log holding every version of every memory
 * (memory.memories.v1: the SQLite log in --data-dir, or Kafka), and the recall services on the
 * retrieval store (SQLite or Elasticsearch) whose Feedback writes versions and tombstones.
 */

/** A memory record as the contract codec carries it. */
export type MemoryRecord = Memory & { type: 'Memory' };

/** The codec of memory.memories.v1 under the configured prefix. */
export function memoryTopicCodec(prefix: string): TopicCodec<MemoryRecord> {
  const topic = TOPICS.memories.topic;
  return codecOnTopic(contractCodec(topic), prefix + topic);
}

/** Records per read: on Kafka each read joins a consumer group (seconds), so large pages. */
const PAGE = 10_000;

/**
 * Every version of one memory on the log, in log order, tombstones included: the records of its
 * key on the key's partition (where every version and tombstone of it is written). On Kafka the
 * compacted topic may have dropped older versions: the history starts at the oldest one kept.
 */
export async function memoryVersionsOnLog(
  log: EventLogPort,
  codec: TopicCodec<MemoryRecord>,
  memoryId: string,
): Promise<LoggedMemoryVersion[]> {
  const ends = await log.endOffsets(codec.topic);
  if (ends.length === 0) return [];
  const partition = partitionOfKey(memoryId, ends.length);
  const versions: LoggedMemoryVersion[] = [];
  let from = 0;
  while (from < ends[partition]) {
    const page = await log.read(codec, partition, from, PAGE, { tombstones: true });
    for (const record of page) {
      if (isLoggedTombstone(record)) {
        if (record.key === memoryId) {
          versions.push({ partition, offset: record.offset, timestamp: null, memory: null });
        }
      } else if (codec.key(record.event) === memoryId) {
        const { type: _type, ...memory } = record.event;
        versions.push({ partition, offset: record.offset, timestamp: null, memory });
      }
    }
    if (page.length > 0) from = page[page.length - 1].offset + 1;
    // A short page read to the end; on Kafka the offsets left are transaction markers.
    if (page.length < PAGE) from = Math.max(from, ends[partition]);
  }
  return versions;
}

/**
 * The memory's history (core `memoryHistory`) from its records on the log and, with `store`,
 * the retrieval store's current document as a last entry when the indexer derived something the
 * log does not hold (a supersession: the older memory demoted, the newer one's relation). A
 * document of an older log version (the indexer behind) adds nothing.
 */
export async function memoryHistoryOnLog(
  log: EventLogPort,
  codec: TopicCodec<MemoryRecord>,
  memoryId: string,
  store: Pick<RecallStore, 'list'> | null = null,
): Promise<MemoryHistoryEntry[]> {
  const versions = await memoryVersionsOnLog(log, codec, memoryId);
  const last = versions.at(-1)?.memory ?? null;
  if (store !== null && last !== null) {
    const stored = await storedMemories(store, last, [memoryId]);
    const current = stored[0];
    const logged = new Set(versions.flatMap((v) => (v.memory ? [v.memory.eventId] : [])));
    if (
      current !== undefined &&
      (current.eventId === last.eventId || !logged.has(current.eventId)) &&
      memoryVersionChanges(last, current).length > 0
    ) {
      versions.push({
        source: 'store',
        partition: -1,
        offset: -1,
        timestamp: null,
        memory: current,
      });
    }
  }
  return memoryHistory(versions);
}

/**
 * Memories of a project as the retrieval store holds them: by id, or the newest STORE_WINDOW
 * matching `filter` (newest `timestamp` first).
 */
export async function storedMemories(
  store: Pick<RecallStore, 'list'>,
  scope: { tenantId: string; projectId: string },
  ids: readonly string[] | null,
  filter: readonly StoreFilter[] = [],
): Promise<Memory[]> {
  const listed = await store.list<MemoryDocument>('memories', {
    scope: { tenantId: scope.tenantId, projectId: scope.projectId },
    filter: ids === null ? filter : [...filter, anyOfFilter('memoryId', ids)],
    size: ids?.length ?? STORE_WINDOW,
  });
  return listed.map(({ source }) => memoryFromSource(source));
}

/** How many documents one listing returns at most (Elasticsearch's result window). */
export const STORE_WINDOW = 10_000;

export interface MemoryLifecycle {
  log: EventLogPort;
  codec: TopicCodec<MemoryRecord>;
  /** Whether the log has the memories topic at all (nothing was ever distilled if not). */
  hasTopic: boolean;
  /** The recall services on the retrieval store, their Feedback writing to `log`. */
  stack: RecallStack;
  /** The tenants that have documents of a project. */
  tenantsWithProject(projectId: string): Promise<string[]>;
  close(): Promise<void>;
}

export interface LifecycleOptions {
  dataDir: string;
  distributed?: boolean;
  /** Kafka client id, so the broker's logs name the command. */
  clientId: string;
  /**
   * The model the store's memories are embedded with, for versions written into the store at
   * once (Feedback CONFIRM); deletions need none (default: no vectors).
   */
  embedder?: Embedder;
}

/**
 * The memories topic and the recall services on the store, in `--data-dir` (embedded) or on the
 * configured Kafka and Elasticsearch (`--distributed`). Writes go to the log first, as the
 * recall server's Feedback does: the running indexer applies them too.
 */
export async function openMemoryLifecycle(options: LifecycleOptions): Promise<MemoryLifecycle> {
  const config = loadConfig();
  const codec = memoryTopicCodec(config.topicPrefix);
  const embedder = options.embedder ?? LEXICAL_ONLY_EMBEDDER;
  if (options.distributed) {
    const kafka = createKafka({ brokers: config.kafka.brokers, clientId: options.clientId });
    // Listed first: asking a missing topic for its offsets must not get it auto-created.
    const admin = kafka.admin();
    await admin.connect();
    const hasTopic = await admin
      .listTopics()
      .then((topics) => topics.includes(codec.topic))
      .finally(() => admin.disconnect());
    const log = new KafkaEventLog(kafka, new AvroRegistry(config.schemaRegistry.url));
    await log.connect();
    return distributedMemoryLifecycle({
      log,
      hasTopic,
      client: createElasticsearchClient(config.elasticsearch.url),
      topicPrefix: config.topicPrefix,
      embedder,
      ranking: config.ranking,
    });
  }
  if (!existsSync(join(options.dataDir, 'events.db'))) {
    throw new Error(
      `no event log in ${options.dataDir} (--data-dir): run \`engram start\` and replay events first`,
    );
  }
  const sqlite = SqliteEventLog.open({ dataDir: options.dataDir });
  const log = new SqliteEventLogAdapter(sqlite);
  const store = SqliteRetrievalStore.open({ dataDir: options.dataDir });
  const stack = createRecallStack({
    ranking: config.ranking,
    backend: sqliteBackend(store),
    embedder,
    publish: publishMemoryRecordsTo(log, codec),
    publishTombstones: publishTombstonesTo(log, config.topicPrefix),
  });
  return {
    log,
    codec,
    hasTopic: sqlite.topic(codec.topic) !== undefined,
    stack,
    tenantsWithProject: (projectId) => store.tenantsWithProject(projectId),
    async close() {
      await stack.access.close().catch(() => undefined);
      store.close();
      sqlite.close();
    },
  };
}

/**
 * The distributed lifecycle: the memories topic on a connected Kafka log, the recall services on
 * the Elasticsearch indices of `topicPrefix`; closing it disconnects the log and the client.
 */
export function distributedMemoryLifecycle(parts: {
  log: KafkaEventLog;
  /** Whether the memories topic exists (nothing to read or prune if not). */
  hasTopic: boolean;
  client: Client;
  topicPrefix: string;
  embedder: Embedder;
  ranking: RankingConfig;
}): MemoryLifecycle {
  const { log, client, topicPrefix, hasTopic } = parts;
  const codec = memoryTopicCodec(topicPrefix);
  const indices = retrievalIndexNames(topicPrefix);
  const stack = createRecallStack({
    backend: elasticsearchBackend(client, indices),
    embedder: parts.embedder,
    ranking: parts.ranking,
    publish: publishMemoryRecordsTo(log, codec),
    publishTombstones: publishTombstonesTo(log, topicPrefix),
  });
  return {
    log,
    codec,
    hasTopic,
    stack,
    tenantsWithProject: (projectId) => tenantsWithProject(client, [indices.memories], projectId),
    async close() {
      await stack.access.close().catch(() => undefined);
      await log.disconnect();
      await client.close();
    },
  };
}

/**
 * Feedback's publisher for the lifecycle commands: the memory versions it writes, on the
 * memories topic (Feedback writes nothing else).
 */
export function publishMemoryRecordsTo(
  log: Pick<EventLogPort, 'publish'>,
  codec: TopicCodec<MemoryRecord>,
): (records: Typed[]) => Promise<void> {
  return async (records) => {
    for (const record of records) {
      if (record.type !== 'Memory') {
        throw new RangeError(`the memory commands write memories only, not ${record.type}`);
      }
      await log.publish(codec, [record]);
    }
  };
}

/**
 * The tenant a command acts for: `--tenant`, else the only one with documents of the project
 * (null: the project has none). Several: `refuse` says the caller must choose.
 */
export async function tenantOfProject(
  lifecycle: Pick<MemoryLifecycle, 'tenantsWithProject'>,
  projectId: string,
  tenant: string | undefined,
  refuse: (message: string) => Error = (message) => new InvalidArgumentError(message),
): Promise<string | null> {
  if (tenant !== undefined) return tenant;
  const tenants = await lifecycle.tenantsWithProject(projectId);
  if (tenants.length > 1) {
    throw refuse(
      `several tenants have project ${projectId} (${tenants.join(', ')}): pass --tenant`,
    );
  }
  return tenants[0] ?? null;
}
