import type { Typed } from '@engram/contracts';
import { decodeEvent } from '@engram/embedded';
import { contractCodec } from '@engram/core';
import { startEmbeddedRpcServer } from './testing/embedded-rpc-server';
import { describeRecallRpcs, RPC_TOKENS } from './testing/recall-rpcs.suite';

// The rpcs beside Recall over real gRPC on the embedded stores (what `engram start` serves): the
// SQLite retrieval store, written by the real indexer with the contract's deterministic concept
// embedder, and the SQLite event log Remember and Feedback publish to.
describeRecallRpcs('embedded SQLite', async () => {
  const server = await startEmbeddedRpcServer(RPC_TOKENS);
  const { log } = server;
  return {
    url: server.url,
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
    indexMemory: (memory) => server.indexMemory(memory),
    close: () => server.close(),
  };
});
