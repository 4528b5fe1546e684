import type { Embedder } from '@engram/ai';
import {
  createElasticsearchClient,
  ElasticsearchReembedder,
  ensureRetrievalIndices,
  retrievalIndexNames,
} from '@engram/elasticsearch';
import { memoryDocument, withEmbedding, type MemoryDocument } from '@engram/core';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { reembed } from '../../apps/engram/src/commands/reindex.command';
import { memory } from '../../libs/core/src/retrieval/testing/fixtures';
import { uniqueName } from './support/unique';

// `engram reindex --distributed` on real Elasticsearch: its own three indices (8 dimensions).

const DIMS = 8;
const SILENT = { total: () => undefined, advance: () => undefined, stop: () => undefined };

/** A stand-in model (the model is not what is tested): the text's length in every component. */
const embedder: Embedder = {
  id: 'reindex-test@2',
  dims: DIMS,
  embed: (texts) =>
    Promise.resolve(texts.map((text) => new Float32Array(DIMS).fill(text.length / 100))),
};

describe('engram reindex (distributed)', () => {
  const client = createElasticsearchClient(inject('infra').elasticsearchUrl);
  const indices = retrievalIndexNames(`${uniqueName('it-reindex')}.`);
  afterAll(async () => {
    await client.indices.delete({ index: Object.values(indices), ignore_unavailable: true });
    await client.close();
  });

  async function indexMemory(id: string, model: string | null) {
    const { body } = memoryDocument(memory({ memoryId: id, content: `content of ${id}` }));
    const vector = model ? { model, dimension: DIMS, vector: new Array(DIMS).fill(0.5) } : null;
    await client.index({ index: indices.memories, id, document: withEmbedding(body, vector) });
  }

  it('should embed every document not of the model, once, and refuse another dimension', async () => {
    await ensureRetrievalIndices(client, indices, { dims: DIMS });
    await indexMemory('old-model', 'reindex-test@1');
    await indexMemory('no-vector', null);
    await indexMemory('current', embedder.id);
    await client.indices.refresh({ index: Object.values(indices) });
    const target = new ElasticsearchReembedder(client, indices);
    const run = () =>
      reembed(target, embedder, { tiers: ['memories'], batch: 1, progress: SILENT });

    const first = await run();
    expect(first.tiers).toEqual([{ tier: 'memories', selected: 2, embedded: 2, skipped: 0 }]);
    await client.indices.refresh({ index: indices.memories });
    const stored = await client.mget<MemoryDocument>({
      index: indices.memories,
      ids: ['old-model', 'no-vector'],
    });
    for (const doc of stored.docs) {
      expect('_source' in doc && doc._source).toMatchObject({
        embeddingModel: embedder.id,
        embeddingDims: DIMS,
      });
    }
    expect((await run()).tiers[0]).toMatchObject({ selected: 0, embedded: 0 });

    const wider = { ...embedder, id: 'wider@1', dims: DIMS * 2 };
    await expect(
      reembed(target, wider, { tiers: ['memories'], batch: 8, progress: SILENT }),
    ).rejects.toThrow(/8-dimensional vectors and wider@1 makes 16/);
  });
});
