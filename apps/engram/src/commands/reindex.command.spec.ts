import type { Embedder } from '@engram/ai';
import { RetrievalReembedder, SqliteRetrievalStore } from '@engram/embedded';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { embeddedReembedTarget, reembed, warmKnn } from './reindex.command';

// `engram reindex` on a real SQLite store. The embedder is a deterministic stand-in (the model is
// not what is tested here): a vector from the text's letters, so that kNN can tell documents apart.

const SCOPE = { tenantId: 'acme', projectId: 'api' };
const SILENT = { total: () => undefined, advance: () => undefined, stop: () => undefined };

function letterEmbedder(id: string, dims = 8): Embedder & { calls: number } {
  const embedder = {
    id,
    dims,
    calls: 0,
    embed: (texts: string[]) => {
      embedder.calls += 1;
      return Promise.resolve(
        texts.map((text) => {
          const v = new Float32Array(dims);
          for (const ch of text) v[ch.charCodeAt(0) % dims] += 1;
          return v;
        }),
      );
    },
  };
  return embedder;
}

function memory(id: string, text: string, model: string | null) {
  return {
    action: 'index' as const,
    index: 'memories',
    id,
    document: {
      tenantId: 'acme',
      projectId: 'api',
      text,
      embedding: model ? [1, 0, 0] : null,
      embeddingModel: model,
      embeddingDims: model ? 3 : null,
    },
  };
}

describe('engram reindex (embedded)', () => {
  const dirs: string[] = [];
  afterEach(() => dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  function storeWith(operations: ReturnType<typeof memory>[], annMinVectors = 5_000) {
    const dir = mkdtempSync(join(tmpdir(), 'engram-reindex-'));
    dirs.push(dir);
    const store = SqliteRetrievalStore.open({ dataDir: dir, vectorIndex: { annMinVectors } });
    store.write(operations);
    return store;
  }

  async function run(store: SqliteRetrievalStore, embedder: Embedder, batch = 2) {
    const reembedder = new RetrievalReembedder(store.path);
    try {
      return await reembed(embeddedReembedTarget(reembedder), embedder, {
        tiers: ['memories', 'episodes', 'turns'],
        batch,
        progress: SILENT,
      });
    } finally {
      reembedder.close();
    }
  }

  it('should give every document a vector of the model, and find them with it', async () => {
    const store = storeWith([
      memory('old-model', 'refresh token race on logout', 'old@1'),
      memory('no-vector', 'kafka consumer stalls after rebalance', null),
      memory('empty', '', null),
    ]);
    try {
      const embedder = letterEmbedder('new@2');
      const summary = await run(store, embedder);
      expect(summary).toMatchObject({ model: 'new@2', dims: 8 });
      expect(summary.tiers[0]).toEqual({ tier: 'memories', selected: 2, embedded: 2, skipped: 0 });

      const [query] = await embedder.embed(['kafka consumer stalls after rebalance']);
      const found = await store.candidates<{ embeddingModel: string }>('memories', {
        text: '',
        vector: { model: 'new@2', dimension: 8, vector: Array.from(query) },
        scope: SCOPE,
        filter: [],
        size: 5,
      });
      expect(found.knn?.map((hit) => hit.id)).toEqual(['no-vector', 'old-model']);
      expect(found.sources.get('old-model')?.embeddingModel).toBe('new@2');
      // The old model's vectors are gone: a query of that model finds nothing.
      const old = await store.candidates('memories', {
        text: '',
        vector: { model: 'old@1', dimension: 3, vector: [1, 0, 0] },
        scope: SCOPE,
        filter: [],
        size: 5,
      });
      expect(old.knn).toEqual([]);
    } finally {
      store.close();
    }
  });

  it('should build the kNN graph of a large enough scope, so no first recall waits', async () => {
    const store = storeWith(
      [memory('a', 'first memory', null), memory('b', 'second memory', null)],
      2,
    );
    const reembedder = new RetrievalReembedder(store.path);
    try {
      await run(store, letterEmbedder('new@2'));
      const model = { model: 'new@2', dims: 8 };
      expect(reembedder.scopes(model)).toEqual([
        { tier: 'memories', tenantId: 'acme', projectId: 'api' },
      ]);
      expect(warmKnn(store, reembedder.scopes(model), model)).toBe(1);
      const files = readdirSync(join(store.path, '..', 'vector-index'));
      expect(files.filter((name) => name.endsWith('.usearch'))).toHaveLength(1);
    } finally {
      reembedder.close();
      store.close();
    }
  });

  it('should do nothing the second time (idempotent, so an interrupted run resumes)', async () => {
    const store = storeWith([
      memory('a', 'first memory', null),
      memory('b', 'second memory', null),
      memory('c', 'third memory', null),
    ]);
    try {
      await run(store, letterEmbedder('new@2'), 1);
      const again = letterEmbedder('new@2');
      const summary = await run(store, again);
      expect(summary.tiers.map((t) => t.selected)).toEqual([0, 0, 0]);
      expect(again.calls).toBe(0);
    } finally {
      store.close();
    }
  });

  it('should keep a document that another writer replaced while it was being embedded', async () => {
    const store = storeWith([memory('a', 'first text', null)]);
    const reembedder = new RetrievalReembedder(store.path);
    try {
      const target = { model: 'new@2', dims: 8 };
      const [read] = reembedder.next('memories', target, 0, 10);
      store.write([memory('a', 'replaced text', 'indexer@1')]);
      expect(reembedder.write(target, [{ document: read, vector: new Float32Array(8) }])).toBe(0);
      const found = await store.candidates<{ text: string }>('memories', {
        text: 'replaced',
        vector: null,
        scope: SCOPE,
        filter: [],
        size: 5,
      });
      expect(found.sources.get('a')?.text).toBe('replaced text');
    } finally {
      reembedder.close();
      store.close();
    }
  });

  it('should refuse to run without an embedding model', async () => {
    const store = storeWith([memory('a', 'text', null)]);
    try {
      await expect(run(store, { ...letterEmbedder('none'), dims: 0 })).rejects.toThrow(
        /models:setup/,
      );
    } finally {
      store.close();
    }
  });
});
