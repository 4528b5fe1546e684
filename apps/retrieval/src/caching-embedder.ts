import { createHash } from 'node:crypto';
import type { Embedder } from '@engram/ai';

export interface CachingEmbedderOptions {
  /** Texts per call to the model (default 32). */
  batchSize?: number;
  /** Vectors kept, least recently used evicted first (default 4096, about 6 MB at 384 dims). */
  maxEntries?: number;
}

/**
 * The indexer's embedder: calls the model in bounded batches, embeds each distinct text once per
 * call, and remembers recent vectors. Embedding is the costly part of indexing, and the consumer
 * re-runs a batch when Elasticsearch was unavailable or retries records one by one after a
 * rejection: those re-runs find their vectors here. Keys are sha256 digests, so long prompts do
 * not stay in memory as keys.
 */
export class CachingEmbedder implements Embedder {
  readonly id: string;
  readonly dims: number;
  private readonly batchSize: number;
  private readonly maxEntries: number;
  private readonly cache = new Map<string, Float32Array>();
  readonly stats = { hits: 0, embedded: 0, calls: 0 };

  constructor(
    private readonly inner: Embedder,
    { batchSize = 32, maxEntries = 4096 }: CachingEmbedderOptions = {},
  ) {
    if (!Number.isInteger(batchSize) || batchSize < 1) {
      throw new RangeError(`batchSize must be a positive integer, got ${batchSize}`);
    }
    this.id = inner.id;
    this.dims = inner.dims;
    this.batchSize = batchSize;
    this.maxEntries = Math.max(0, maxEntries);
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    const keys = texts.map(digest);
    const found = new Map<string, Float32Array>();
    const missing = new Map<string, string>();
    keys.forEach((key, i) => {
      const cached = this.cache.get(key);
      if (cached) {
        found.set(key, cached);
        this.touch(key, cached);
        this.stats.hits += 1;
      } else {
        missing.set(key, texts[i]);
      }
    });
    const pending = [...missing.entries()];
    for (let start = 0; start < pending.length; start += this.batchSize) {
      const batch = pending.slice(start, start + this.batchSize);
      const vectors = await this.inner.embed(batch.map(([, text]) => text));
      this.stats.calls += 1;
      this.stats.embedded += batch.length;
      batch.forEach(([key], i) => {
        found.set(key, vectors[i]);
        this.touch(key, vectors[i]);
      });
    }
    return keys.map((key) => found.get(key)!);
  }

  private touch(key: string, vector: Float32Array): void {
    if (this.maxEntries === 0) return;
    this.cache.delete(key);
    this.cache.set(key, vector);
    while (this.cache.size > this.maxEntries) {
      this.cache.delete(this.cache.keys().next().value!);
    }
  }
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('base64');
}
