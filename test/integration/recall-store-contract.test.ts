import {
  anyOfFilter,
  BulkWriter,
  createElasticsearchClient,
  ensureRetrievalIndices,
  episodeFilters,
  memoryFilters,
  relatedFileFilter,
  retrievalIndexNames,
  turnFilters,
} from '@engram/elasticsearch';
import { inject } from 'vitest';
import { elasticsearchRecallStore } from '../../apps/retrieval/src/recall-store';
import { RetrievalIndexer } from '../../apps/retrieval/src/retrieval-indexer';
import {
  contractEmbedder,
  describeRecallStoreContract,
} from '../../libs/core/src/ports/testing/recall-store.contract';
import { uniqueName } from './support/unique';

// The same contract suite the embedded SQLite store passes in the unit tier, on real
// Elasticsearch: its own three indices (dimension of the contract's concept embedder).
describeRecallStoreContract('Elasticsearch', async () => {
  const client = createElasticsearchClient(inject('infra').elasticsearchUrl);
  const indices = retrievalIndexNames(`${uniqueName('it-contract')}.`);
  await ensureRetrievalIndices(client, indices, { dims: contractEmbedder().dims });
  const writer = BulkWriter.forClient(client);
  return {
    store: elasticsearchRecallStore(client, indices),
    indexer: (embedder) => new RetrievalIndexer(indices, embedder, writer),
    settle: async () => {
      await client.indices.refresh({ index: Object.values(indices) });
    },
    filters: {
      memories: memoryFilters,
      episodes: episodeFilters,
      turns: turnFilters,
      relatedFile: relatedFileFilter,
      anyOf: anyOfFilter,
    },
    projectName: (prefix: string) => uniqueName(`acme/${prefix}`),
    close: async () => {
      await client.indices.delete({ index: Object.values(indices), ignore_unavailable: true });
      await client.close();
    },
  };
});
