import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { anyOfFilter, type StoreFilter } from '@engram/core';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteRetrievalStore, type RetrievalStoreOperation } from './sqlite-retrieval-store';

// The ANN path of the embedded store (annMinVectors: 1 puts every scope on the graph), checked
// against the exact scan on the same data, and its file as a cache: lost, torn or foreign files
// never lose a vector.

const DIMS = 16;
const MODEL = 'model-a@1';
const SCOPE = { tenantId: 'acme', projectId: 'api' };
const ANN = { annMinVectors: 1, saveEvery: 1_000 };
const EXACT = { annMinVectors: Number.POSITIVE_INFINITY };

/** Deterministic vectors around 8 centres: neighbours are well defined and not trivial. */
function vectorOf(i: number, salt = 0): number[] {
  const centre = i % 8;
  return Array.from({ length: DIMS }, (_, d) => {
    const noise = Math.sin((i + 1) * 12.9898 + d * 78.233 + salt) * 0.35;
    return (d % 8 === centre ? 1 : 0) + noise;
  });
}

function memory(
  id: string,
  vector: number[],
  extra: { tenantId?: string; model?: string; memoryType?: string } = {},
): RetrievalStoreOperation {
  return {
    action: 'index',
    index: 'memories',
    id,
    document: {
      tenantId: extra.tenantId ?? 'acme',
      projectId: 'api',
      memoryType: extra.memoryType ?? 'gotcha',
      text: `memory ${id}`,
      embedding: vector,
      embeddingModel: extra.model ?? MODEL,
      embeddingDims: vector.length,
    },
  };
}

const corpus = (n: number) => Array.from({ length: n }, (_, i) => memory(`m${i}`, vectorOf(i)));

describe('SqliteRetrievalStore kNN on the ANN graph', () => {
  const dirs: string[] = [];
  afterEach(() => dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  function dataDir(): string {
    const dir = mkdtempSync(join(tmpdir(), 'engram-vector-index-'));
    dirs.push(dir);
    return dir;
  }

  async function knnIds(
    store: SqliteRetrievalStore,
    query: number[],
    options: { size?: number; model?: string; filter?: StoreFilter[] } = {},
  ): Promise<string[]> {
    const found = await store.candidates('memories', {
      text: '',
      vector: { model: options.model ?? MODEL, dimension: query.length, vector: query },
      scope: SCOPE,
      filter: options.filter ?? [],
      size: options.size ?? 10,
    });
    return (found.knn ?? []).map((hit) => hit.id);
  }

  function graphFiles(dir: string): string[] {
    return readdirSync(join(dir, 'vector-index')).filter((name) => name.endsWith('.usearch'));
  }

  it('should answer what the exact scan answers, from a graph file in the data dir', async () => {
    const dir = dataDir();
    const ann = SqliteRetrievalStore.open({ dataDir: dir, vectorIndex: ANN });
    const exact = SqliteRetrievalStore.open({ dataDir: dir, vectorIndex: EXACT });
    try {
      ann.write(corpus(400));
      await knnIds(ann, vectorOf(0)); // the graph file exists before the exact store looks
      let overlap = 0;
      for (let q = 0; q < 20; q += 1) {
        const query = vectorOf(1_000 + q, 7);
        const truth = new Set(await knnIds(exact, query));
        overlap += (await knnIds(ann, query)).filter((id) => truth.has(id)).length;
      }
      expect(overlap / 200).toBeGreaterThanOrEqual(0.95);
      expect(graphFiles(dir)).toHaveLength(1);
      expect(ann.describeVectors()).toMatchObject([{ mode: 'ann', vectors: 400 }]);
      expect(exact.describeVectors()).toMatchObject([{ mode: 'exact', vectors: 400 }]);
    } finally {
      ann.close();
      exact.close();
    }
  });

  it('should keep tenants, projects and models apart, and see deletes and moved vectors', async () => {
    const store = SqliteRetrievalStore.open({ dataDir: dataDir(), vectorIndex: ANN });
    try {
      const target = vectorOf(3);
      store.write([
        ...corpus(50),
        memory('other-tenant', target, { tenantId: 'globex' }),
        memory('other-model', target, { model: 'model-b@1' }),
      ]);
      const ids = await knnIds(store, target, { size: 60 });
      expect(ids).toContain('m3');
      expect(ids).not.toContain('other-tenant');
      expect(ids).not.toContain('other-model');
      expect(await knnIds(store, target, { model: 'model-b@1' })).toEqual(['other-model']);

      store.write([{ action: 'delete', index: 'memories', id: 'm3' }, memory('m4', target)]);
      const after = await knnIds(store, target, { size: 60 });
      expect(after).not.toContain('m3');
      expect(after[0]).toBe('m4');
    } finally {
      store.close();
    }
  });

  it('should find the few neighbours a selective filter lets through (exact fallback)', async () => {
    const store = SqliteRetrievalStore.open({
      dataDir: dataDir(),
      vectorIndex: { ...ANN, annMaxCandidates: 32 },
    });
    try {
      // The only decisions are far from the query: past the over-fetched graph answers.
      store.write([
        ...corpus(300),
        memory('decision-1', vectorOf(5), { memoryType: 'decision' }),
        memory('decision-2', vectorOf(6), { memoryType: 'decision' }),
      ]);
      const filter = [anyOfFilter('memoryType', ['decision'])];
      const ids = await knnIds(store, vectorOf(0), { size: 5, filter });
      expect(ids.sort()).toEqual(['decision-1', 'decision-2']);
    } finally {
      store.close();
    }
  });

  it('should lose no vector when the process dies before the graph file is rewritten', async () => {
    const dir = dataDir();
    const first = SqliteRetrievalStore.open({ dataDir: dir, vectorIndex: ANN });
    first.write(corpus(100));
    await knnIds(first, vectorOf(0)); // builds and writes the graph
    first.write([memory('late', vectorOf(9, 3))]);
    await knnIds(first, vectorOf(0)); // applied in memory, file not rewritten (saveEvery)
    // No close(): like a SIGKILL, the file on disk lags behind SQLite.

    const second = SqliteRetrievalStore.open({ dataDir: dir, vectorIndex: ANN });
    try {
      expect((await knnIds(second, vectorOf(9, 3)))[0]).toBe('late');
      expect(second.describeVectors()).toMatchObject([{ mode: 'ann', vectors: 101 }]);
    } finally {
      second.close();
    }
  });

  it('should rebuild a torn or foreign graph file from SQLite', async () => {
    const dir = dataDir();
    const store = SqliteRetrievalStore.open({ dataDir: dir, vectorIndex: ANN });
    store.write(corpus(100));
    await knnIds(store, vectorOf(0));
    store.close();
    const [file] = graphFiles(dir);
    writeFileSync(join(dir, 'vector-index', file), 'not a graph');

    const reopened = SqliteRetrievalStore.open({ dataDir: dir, vectorIndex: ANN });
    try {
      expect((await knnIds(reopened, vectorOf(42)))[0]).toBe('m42');
    } finally {
      reopened.close();
    }

    // A graph of a deleted retrieval.db is ahead of the new database's log: never trusted.
    rmSync(join(dir, 'retrieval.db'));
    rmSync(join(dir, 'retrieval.db-wal'), { force: true });
    rmSync(join(dir, 'retrieval.db-shm'), { force: true });
    const fresh = SqliteRetrievalStore.open({ dataDir: dir, vectorIndex: ANN });
    try {
      fresh.write([memory('only', vectorOf(42))]);
      expect(await knnIds(fresh, vectorOf(42))).toEqual(['only']);
    } finally {
      fresh.close();
    }
  });
});
