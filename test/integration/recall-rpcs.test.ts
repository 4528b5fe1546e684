import { DEFAULT_RANKING_CONFIG } from '@engram/core';
import { freePort } from '../support/free-port';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OnnxMiniLmEmbedder } from '@engram/ai';
import type { Typed } from '@engram/contracts';
import { KafkaEventLog } from '@engram/kafka';
import {
  BulkWriter,
  elasticsearchStoreWriter,
  createElasticsearchClient,
  ensureRetrievalIndices,
  retrievalIndexNames,
} from '@engram/elasticsearch';
import { inject } from 'vitest';
import { indexMemoryWith } from '../../apps/retrieval/src/recall-stack';
import { openElasticsearchRecall } from '../../apps/retrieval/src/elasticsearch-retrieval';
import { startRecallServer } from '../../apps/retrieval/src/recall-server';
import {
  prefixedRecordCodec,
  publishRecordsTo,
  publishTombstonesTo,
} from '../../apps/retrieval/src/record-publisher';
import { RetrievalIndexer } from '../../apps/retrieval/src/retrieval-indexer';
import {
  contractGraph,
  describeRecallRpcs,
  RPC_TOKENS,
} from '../../apps/retrieval/src/testing/recall-rpcs.suite';
import { indexRpcCorpus, rpcCorpus } from '../../apps/retrieval/src/testing/rpc-corpus';
import { consumeEvents, testKafka, testRegistry } from './support/kafka-fixtures';
import { uniqueName } from './support/unique';

// InjectForFile, BuildContext, GetWorkflowRecipe, GetEpisodeSequence, GetEpisodeChain,
// ReplayTopic, Remember and Feedback over real gRPC against real Elasticsearch with the real
// MiniLM model and real Kafka (Remember's and Feedback's records and tombstones, on topics of its
// own): the same suite the embedded SQLite server passes in the unit tier, on indices of its own.
describeRecallRpcs('Elasticsearch', async () => {
  const infra = inject('infra');
  const es = createElasticsearchClient(infra.elasticsearchUrl);
  const prefix = `${uniqueName('it-rpcs')}.`;
  const indices = retrievalIndexNames(prefix);
  const embedder = await OnnxMiniLmEmbedder.load();
  await ensureRetrievalIndices(es, indices, { dims: embedder.dims });
  const indexer = new RetrievalIndexer(
    embedder,
    elasticsearchStoreWriter(BulkWriter.forClient(es), indices),
  );
  await indexRpcCorpus(indexer, rpcCorpus(Date.now()));
  await es.indices.refresh({ index: Object.values(indices) });
  const kafka = testKafka();
  const events = new KafkaEventLog(kafka, testRegistry());
  await events.connect();
  const topicPrefix = `${uniqueName('it-rpcs')}.`;
  for (const [topic, compacted] of [
    ['agent.lifecycle.v1', false],
    ['memory.memories.v1', true],
  ] as const) {
    await events.ensureTopic({ topic: topicPrefix + topic, partitions: 1, compacted });
  }
  // The graph rpcs read the observer graph through its port: the embedded adapter here (the
  // Neo4j one passes the same graph contract).
  const graphDir = await mkdtemp(join(tmpdir(), 'engram-rpcs-graph-'));
  const graph = await contractGraph(graphDir);
  // The server's own client and access-counter mirror, as the distributed service opens them.
  const serverBackend = openElasticsearchRecall({
    elasticsearchUrl: infra.elasticsearchUrl,
    indexPrefix: prefix,
    warn: () => undefined,
  });
  const server = await startRecallServer({
    ranking: DEFAULT_RANKING_CONFIG,
    neighbours: graph,
    publish: publishRecordsTo(events, topicPrefix),
    publishTombstones: publishTombstonesTo(events, topicPrefix),
    backend: serverBackend.backend,
    embedder,
    url: `127.0.0.1:${await freePort()}`,
    tokens: RPC_TOKENS,
    logger: false,
  });
  return {
    url: server.url,
    published: (topic, count) => {
      const record = { type: topic === 'memory.memories.v1' ? 'Memory' : 'RememberRequested' };
      return consumeEvents(kafka, prefixedRecordCodec(topicPrefix, record as Typed), count);
    },
    tombstones: async (topic) => {
      const codec = prefixedRecordCodec(topicPrefix, { type: 'Memory' } as Typed);
      const [end] = await events.endOffsets(topicPrefix + topic);
      const items = await events.read(codec, 0, 0, end, { tombstones: true });
      return items.flatMap((item) => (item.event === null ? [item.key] : []));
    },
    // The indexer's own write, then a refresh: the next search sees it.
    indexMemory: indexMemoryWith(indexer, () =>
      es.indices.refresh({ index: Object.values(indices) }),
    ),
    close: async () => {
      await server.stop();
      await serverBackend.close();
      await events.disconnect();
      graph.close();
      await rm(graphDir, { recursive: true, force: true });
      await es.indices.delete({ index: Object.values(indices), ignore_unavailable: true });
      await es.close();
    },
  };
});
