import {
  LEXICAL_ONLY_EMBEDDER,
  prefixedRetrievalTopics,
  sqliteBackend,
  startRetrieval,
  type RunningRetrieval,
} from '@engram/app-retrieval';
import { loadConfig } from '@engram/config';
import type { Memory } from '@engram/contracts';
import type { TopicCodec } from '@engram/core';
import {
  EmbeddedStreamPlatform,
  SqliteEventLog,
  SqliteEventLogAdapter,
  SqliteRetrievalStore,
} from '@engram/embedded';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { memoryTopicCodec, type MemoryRecord } from '../commands/memory-lifecycle';
import { pollUntil } from './poll-until';

/**
 * For specs of the memory lifecycle commands: a temp data directory with the embedded log and
 * the embedded retrieval indexer consuming memory.memories.v1 into the SQLite store (lexical
 * only), as `engram start` runs them; the memories given are published and indexed.
 */
export interface EmbeddedMemories {
  dir: string;
  log: SqliteEventLog;
  events: SqliteEventLogAdapter;
  /** The indexer and the store it writes (`retrieval.db` in `dir`). */
  retrieval: RunningRetrieval & { store: SqliteRetrievalStore };
  codec: TopicCodec<MemoryRecord>;
  /** Publishes memories (next versions) and waits until they are indexed. */
  publish(memories: readonly Memory[]): Promise<void>;
  /** Returns once the indexer has handled every record on the memories topic. */
  indexed(): Promise<void>;
  stop(): Promise<void>;
}

export async function startEmbeddedMemories(
  name: string,
  memories: readonly Memory[],
): Promise<EmbeddedMemories> {
  const prefix = loadConfig().topicPrefix;
  const codec = memoryTopicCodec(prefix);
  const dir = mkdtempSync(join(tmpdir(), `engram-${name}-`));
  const log = SqliteEventLog.open({ dataDir: dir });
  const events = new SqliteEventLogAdapter(log);
  const store = SqliteRetrievalStore.open({ dataDir: dir });
  const indexer = await startRetrieval({
    platform: new EmbeddedStreamPlatform(log),
    backend: sqliteBackend(store),
    embedder: LEXICAL_ONLY_EMBEDDER,
    topics: prefixedRetrievalTopics(prefix),
    partitions: 2,
    retry: { initialMs: 10, maxMs: 50 },
  });
  const retrieval = { ...indexer, store };
  const indexed = async () => {
    const total = (await events.endOffsets(codec.topic)).reduce((a, b) => a + b, 0);
    await pollUntil(
      () => Promise.resolve(retrieval.consumer.counters.processed),
      (processed) => processed === total,
      5_000,
    );
  };
  const publish = async (batch: readonly Memory[]) => {
    await events.publish(
      codec,
      batch.map((m) => ({ type: 'Memory' as const, ...m })),
    );
    await indexed();
  };
  await publish(memories);
  return {
    dir,
    log,
    events,
    retrieval,
    codec,
    publish,
    indexed,
    async stop() {
      await retrieval.stop();
      store.close();
      log.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
