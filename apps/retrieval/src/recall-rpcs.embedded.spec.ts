import { freePort } from '../../../test/support/free-port';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Typed } from '@engram/contracts';
import { BulkWriter } from '@engram/elasticsearch';
import {
  decodeEvent,
  SqliteEventLog,
  SqliteEventLogAdapter,
  SqliteRetrievalStore,
} from '@engram/embedded';
import { contractCodec } from '@engram/kafka';
import { contractEmbedder } from '../../../libs/core/src/ports/testing/recall-store.contract';
import { serveRecallGrpc } from './recall.runtime';
import { publishRecordsTo, publishTombstonesTo } from './record-publisher';
import { RetrievalIndexer } from './retrieval-indexer';
import {
  createEmbeddedRecallStack,
  EMBEDDED_INDEX_NAMES,
  sqliteBulkSend,
} from './retrieval.embedded';
import { contractGraph, describeRecallRpcs, RPC_TOKENS } from './testing/recall-rpcs.suite';
import { indexRpcCorpus, rpcCorpus } from './testing/rpc-corpus';

// The rpcs beside Recall over real gRPC on the embedded stores (what `engram start` serves): the
// SQLite retrieval store, written by the real indexer with the contract's deterministic concept
// embedder, and the SQLite event log Remember and Feedback publish to.
describeRecallRpcs('embedded SQLite', async () => {
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
  const indexer = new RetrievalIndexer(
    EMBEDDED_INDEX_NAMES,
    embedder,
    new BulkWriter(sqliteBulkSend(store)),
  );
  await indexRpcCorpus(indexer, rpcCorpus(Date.now()));
  const stack = createEmbeddedRecallStack({
    store,
    embedder,
    publish: publishRecordsTo(events, ''),
    publishTombstones: publishTombstonesTo(events, ''),
  });
  const graph = await contractGraph(dir);
  const { app, url } = await serveRecallGrpc(stack, {
    neighbours: graph,
    url: `127.0.0.1:${await freePort()}`,
    tokens: RPC_TOKENS,
    logger: false,
  });
  return {
    url,
    published: (topic) => {
      const codec = contractCodec(topic);
      const records = [0, 1].flatMap((partition) => log.read(topic, partition, 0, 1_000));
      return Promise.resolve(
        records.filter((r) => r.value !== null).map((r) => decodeEvent(codec, r).event as Typed),
      );
    },
    tombstones: (topic) => {
      const records = [0, 1].flatMap((partition) => log.read(topic, partition, 0, 1_000));
      return Promise.resolve(records.filter((r) => r.value === null).map((r) => r.key!));
    },
    close: async () => {
      await app.close();
      await stack.access.close();
      store.close();
      graph.close();
      log.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
