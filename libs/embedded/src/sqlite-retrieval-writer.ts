import type { RecallStoreWriter, StoreWriteReport } from '@engram/core';
import type { SqliteRetrievalStore } from './sqlite-retrieval-store';

/**
 * The indexer's side of the SQLite store: every write call is one transaction (all or none), the
 * upserts and deletes by id of RecallStoreWriter. Access counters live in the memory documents
 * here, so they go with them.
 */
export function sqliteStoreWriter(store: SqliteRetrievalStore): RecallStoreWriter {
  return {
    write: (writes) =>
      new Promise<StoreWriteReport>((resolve) => {
        const report: StoreWriteReport = { requests: 0, indexed: 0, deleted: 0, alreadyAbsent: 0 };
        if (writes.length === 0) return resolve(report);
        const results = store.write(
          writes.map((write) =>
            write.action === 'delete'
              ? { action: 'delete', index: write.tier, id: write.id }
              : { action: 'index', index: write.tier, id: write.id, document: write.document },
          ),
        );
        report.requests = 1;
        for (const result of results) {
          if (result === 'created' || result === 'updated') report.indexed += 1;
          else if (result === 'deleted') report.deleted += 1;
          else report.alreadyAbsent += 1;
        }
        resolve(report);
      }),
  };
}
