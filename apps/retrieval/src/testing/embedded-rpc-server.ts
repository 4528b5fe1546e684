import { DEFAULT_RANKING_CONFIG } from '@engram/core';
import { freePort } from '../../../../test/support/free-port';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Memory } from '@engram/contracts';
import type { TenantTokens } from '@engram/core';
import {
  SqliteEventLog,
  SqliteEventLogAdapter,
  SqliteRetrievalStore,
  sqliteStoreWriter,
} from '@engram/embedded';
import { contractEmbedder } from '../../../../libs/core/src/ports/testing/recall-store.contract';
import { indexMemoryWith } from '../recall-stack';
import { serveRecallGrpc } from '../recall-server';
import { publishRecordsTo, publishTombstonesTo } from '../record-publisher';
import { RetrievalIndexer } from '../retrieval-indexer';
import { createRecallStack } from '../retrieval-backend';
import { sqliteBackend } from '../sqlite-backend';
import { contractGraph } from './recall-rpcs.suite';
import { indexRpcCorpus, rpcCorpus } from './rpc-corpus';

export interface EmbeddedRpcServer {
  url: string;
  /** Where the SQLite files are (the log, the retrieval store, the graph). */
  dataDir: string;
  /** The embedded log Remember and Feedback publish to. */
  log: SqliteEventLog;
  /** Indexes a memory through the real indexer (what the log's consumer does once it validates). */
  indexMemory(memory: Memory): Promise<void>;
  close(): Promise<void>;
}

/**
 * engram.recall.v1 over real gRPC on the embedded stores (what `engram start` serves), on a free
 * loopback port, with `rpcCorpus` indexed by the real indexer (the contract's deterministic
 * concept embedder), the contract graph for GetFileNeighbors / AnalyzeImpact and a SQLite log
 * for Remember and Feedback. Test support only.
 */
export async function startEmbeddedRpcServer(
  tokens: TenantTokens | null,
): Promise<EmbeddedRpcServer> {
  const dir = mkdtempSync(join(tmpdir(), 'engram-rpcs-'));
  const store = SqliteRetrievalStore.open({ dataDir: dir });
  const log = SqliteEventLog.open({ dataDir: dir });
  const events = new SqliteEventLogAdapter(log);
  for (const [topic, compacted] of [
    ['agent.lifecycle.v1', false],
    ['memory.memories.v1', true],
  ] as const) {
    await events.ensureTopic({ topic, partitions: 2, compacted });
  }
  const embedder = contractEmbedder();
  const indexer = new RetrievalIndexer(embedder, sqliteStoreWriter(store));
  await indexRpcCorpus(indexer, rpcCorpus(Date.now()));
  const stack = createRecallStack({
    ranking: DEFAULT_RANKING_CONFIG,
    backend: sqliteBackend(store),
    embedder,
    publish: publishRecordsTo(events, ''),
    publishTombstones: publishTombstonesTo(events, ''),
  });
  const graph = await contractGraph(dir);
  const { app, url } = await serveRecallGrpc(stack, {
    neighbours: graph,
    url: `127.0.0.1:${await freePort()}`,
    tokens,
    logger: false,
  });
  return {
    url,
    dataDir: dir,
    log,
    indexMemory: indexMemoryWith(indexer),
    close: async () => {
      await app.close();
      await stack.access.close();
      store.close();
      graph.close();
      log.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
