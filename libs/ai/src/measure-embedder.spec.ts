import { l2Normalise } from '@engram/core';
import { describe, expect, it } from 'vitest';
import type { Embedder } from './embedder';
import { BENCH_SENTENCES, measureEmbedder, percentile, SANITY_TEXTS } from './measure-embedder';

/** Embeds by a fixed table and advances a fake clock 1 ms per text, so the numbers are exact. */
function fakeEmbedder(clock: { now: number }): Embedder {
  const table = new Map<string, number[]>([
    [SANITY_TEXTS[0], [1, 0]],
    [SANITY_TEXTS[1], [1, 1]],
    [SANITY_TEXTS[2], [0, 1]],
  ]);
  return {
    id: 'fake@1',
    dims: 2,
    embed: (texts) => {
      clock.now += texts.length;
      return Promise.resolve(texts.map((text) => l2Normalise(table.get(text) ?? [1, 0])));
    },
  };
}

describe('measureEmbedder', () => {
  it('should report id, dims, throughput, single latency and the sanity pair', async () => {
    const clock = { now: 0 };
    const result = await measureEmbedder(fakeEmbedder(clock), { rounds: 3, now: () => clock.now });

    expect(BENCH_SENTENCES).toHaveLength(32);
    expect(result).toMatchObject({
      id: 'fake@1',
      dims: 2,
      sentencesPerSecond: 1000,
      singleLatencyMs: { p50: 1, p95: 1 },
    });
    expect(result.sanity.related).toBeCloseTo(Math.SQRT1_2, 6);
    expect(result.sanity.unrelated).toBe(0);
  });
});

describe('percentile', () => {
  it('should take the nearest rank', () => {
    expect(percentile([5, 1, 4, 2, 3], 0.5)).toBe(3);
    expect(percentile([5, 1, 4, 2, 3], 0.95)).toBe(5);
    expect(percentile([7], 0.5)).toBe(7);
  });
});
