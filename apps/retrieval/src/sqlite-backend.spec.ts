import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteRetrievalStore } from '@engram/embedded';
import { describe } from 'vitest';
import { describeRecallStoreContract } from '../../../libs/core/src/ports/testing/recall-store.contract';
import { sqliteBackend } from './sqlite-backend';
import { RetrievalIndexer } from './retrieval-indexer';

// The RecallStore contract on the embedded backend (the SQLite store), written through the same
// RetrievalIndexer as Elasticsearch (only the backend's writer differs); kNN on the
// exact scan and, with every scope on it, on the ANN graph (vector-index.ts).
const KNN_MODES = [
  ['exact kNN', { annMinVectors: Number.POSITIVE_INFINITY }],
  ['ANN kNN', { annMinVectors: 1 }],
] as const;
describe.each(KNN_MODES)('embedded SQLite (FTS5 + %s)', (_mode, vectorIndex) => {
  describeRecallStoreContract('embedded SQLite', () => {
    const dir = mkdtempSync(join(tmpdir(), 'engram-retrieval-'));
    const store = SqliteRetrievalStore.open({ dataDir: dir, vectorIndex });
    const backend = sqliteBackend(store);
    let n = 0;
    return Promise.resolve({
      store: backend.store,
      indexer: (embedder) => new RetrievalIndexer(embedder, backend.writer),
      settle: () => Promise.resolve(),
      projectName: (prefix: string) => `acme/${prefix}-${n++}`,
      close: () => {
        store.close();
        rmSync(dir, { recursive: true, force: true });
        return Promise.resolve();
      },
    });
  });
});
