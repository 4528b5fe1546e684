import type { Embedder } from '@engram/ai';
import { describe, expect, it, vi } from 'vitest';
import { CachingEmbedder } from './caching-embedder';

function fakeEmbedder(): Embedder & { embed: ReturnType<typeof vi.fn> } {
  return {
    id: 'fake@1',
    dims: 2,
    embed: vi.fn((texts: readonly string[]) =>
      Promise.resolve(texts.map((text) => new Float32Array([text.length, 1]))),
    ),
  };
}

describe('CachingEmbedder', () => {
  describe('embed', () => {
    it('should call the model in bounded batches and return vectors in input order', async () => {
      const inner = fakeEmbedder();
      const sut = new CachingEmbedder(inner, { batchSize: 2 });
      const vectors = await sut.embed(['a', 'bb', 'ccc', 'dddd', 'eeeee']);
      expect(vectors.map((v) => v[0])).toEqual([1, 2, 3, 4, 5]);
      expect(inner.embed.mock.calls.map(([texts]) => texts as string[])).toEqual([
        ['a', 'bb'],
        ['ccc', 'dddd'],
        ['eeeee'],
      ]);
      expect(sut.id).toBe('fake@1');
      expect(sut.dims).toBe(2);
    });

    it('should embed a repeated text once and serve it again from the cache', async () => {
      const inner = fakeEmbedder();
      const sut = new CachingEmbedder(inner);
      await sut.embed(['same', 'same', 'other']);
      const again = await sut.embed(['other', 'same']);
      expect(inner.embed).toHaveBeenCalledTimes(1);
      expect(inner.embed).toHaveBeenCalledWith(['same', 'other']);
      expect(again.map((v) => v[0])).toEqual([5, 4]);
      expect(sut.stats).toEqual({ hits: 2, embedded: 2, calls: 1 });
    });

    it('should evict the least recently used vector beyond maxEntries', async () => {
      const inner = fakeEmbedder();
      const sut = new CachingEmbedder(inner, { maxEntries: 2 });
      await sut.embed(['a', 'b']);
      await sut.embed(['a']); // a is now the most recent
      await sut.embed(['c']); // evicts b
      await sut.embed(['a', 'b']);
      expect(inner.embed.mock.calls.map(([texts]) => texts as string[])).toEqual([
        ['a', 'b'],
        ['c'],
        ['b'],
      ]);
    });

    it('should refuse a batch size below one', () => {
      expect(() => new CachingEmbedder(fakeEmbedder(), { batchSize: 0 })).toThrow(RangeError);
    });
  });
});
