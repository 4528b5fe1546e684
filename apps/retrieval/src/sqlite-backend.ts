import { sqliteStoreWriter, type SqliteRetrievalStore } from '@engram/embedded';
import type { RetrievalBackend } from './retrieval-backend';

/**
 * The SQLite retrieval store of embedded mode (whoever opened it closes it). It keeps no tool
 * calls: the embedded friction report reads them from the log.
 */
export function sqliteBackend(store: SqliteRetrievalStore): RetrievalBackend {
  return {
    store,
    writer: sqliteStoreWriter(store),
    toolCalls: null,
    description: store.path,
  };
}
