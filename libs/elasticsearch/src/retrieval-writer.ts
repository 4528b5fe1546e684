import type { RecallStoreWriter, StoreWrite } from '@engram/core';
import type { BulkOperation, BulkReport, BulkWriter } from './bulk-writer';
import type { RetrievalIndexNames } from './retrieval-indices';

/** A store write as a bulk operation on the tier's index. */
export function bulkOperationOf(write: StoreWrite, indices: RetrievalIndexNames): BulkOperation {
  const index = indices[write.tier];
  return write.action === 'delete'
    ? { action: 'delete', index, id: write.id }
    : { action: 'index', index, id: write.id, document: write.document };
}

const report = ({ requests, indexed, deleted, alreadyAbsent }: BulkReport) => ({
  requests,
  indexed,
  deleted,
  alreadyAbsent,
});

/**
 * The indexer's side of the Elasticsearch store: writes as bulk requests on the tiers' indices,
 * and the access counters of deleted memories removed from their own index (when it has one).
 */
export function elasticsearchStoreWriter(
  writer: BulkWriter,
  indices: RetrievalIndexNames,
): RecallStoreWriter {
  const { memoryAccess } = indices;
  return {
    write: async (writes) =>
      report(await writer.write(writes.map((write) => bulkOperationOf(write, indices)))),
    ...(memoryAccess !== undefined && {
      deleteAccessCounters: async (memoryIds: readonly string[]) =>
        report(
          await writer.write(
            memoryIds.map((id) => ({ action: 'delete' as const, index: memoryAccess, id })),
          ),
        ),
    }),
  };
}
