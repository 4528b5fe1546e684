import {
  AccessCounterMirror,
  BulkWriter,
  createElasticsearchClient,
  elasticsearchStoreWriter,
  ensureRetrievalIndices,
  retrievalIndexNames,
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
// Elasticsearch: its own three indices (dimension of the contract's concept embedder) — once
// reading the access counters from Elasticsearch (a one-shot CLI), once from the in-memory
// mirror a recall server holds.
for (const mirrored of [false, true]) {
  describeRecallStoreContract(
    mirrored ? 'Elasticsearch, counters mirrored' : 'Elasticsearch',
    async () => {
      const client = createElasticsearchClient(inject('infra').elasticsearchUrl);
      const indices = retrievalIndexNames(`${uniqueName('it-contract')}.`);
      await ensureRetrievalIndices(client, indices, { dims: contractEmbedder().dims });
      const counters = mirrored
        ? new AccessCounterMirror(client, indices.memoryAccess, { pollMs: 100 })
        : null;
      await counters?.start();
      const writer = BulkWriter.forClient(client);
      return {
        store: elasticsearchRecallStore(client, indices, { counters }),
        indexer: (embedder) =>
          new RetrievalIndexer(embedder, elasticsearchStoreWriter(writer, indices)),
        settle: async () => {
          await client.indices.refresh({ index: Object.values(indices) });
          await counters?.catchUp();
        },
        projectName: (prefix: string) => uniqueName(`acme/${prefix}`),
        close: async () => {
          await counters?.close();
          await client.indices.delete({ index: Object.values(indices), ignore_unavailable: true });
          await client.close();
        },
      };
    },
  );
}
