import { describe, expect, it } from 'vitest';
import { maxRrfScore, reciprocalRankFusion } from './rrf';

describe('reciprocalRankFusion', () => {
  it('should sum 1/(k + rank) over the lists (worked by hand, k = 60)', () => {
    const fused = reciprocalRankFusion(
      [
        [
          { id: 'A', score: 12.5 },
          { id: 'B', score: 8 },
          { id: 'C', score: 3 },
        ],
        [{ id: 'B' }, { id: 'D' }, { id: 'A' }],
      ],
      60,
    );
    // B: 1/62 + 1/61 = 0.0325224749; A: 1/61 + 1/63 = 0.0322664585; D: 1/62; C: 1/63.
    expect(fused.map((entry) => entry.id)).toEqual(['B', 'A', 'D', 'C']);
    expect(fused[0].fused).toBeCloseTo(0.0325224749, 10);
    expect(fused[1].fused).toBeCloseTo(0.0322664585, 10);
    expect(fused[2].fused).toBeCloseTo(0.0161290323, 10);
    expect(fused[3].fused).toBeCloseTo(0.0158730159, 10);
    expect(fused[1]).toMatchObject({ ranks: [1, 3], scores: [12.5, 0] });
    expect(fused[2]).toMatchObject({ ranks: [0, 2] });
  });

  it('should break fused ties by id so the order is deterministic', () => {
    const fused = reciprocalRankFusion(
      [
        [{ id: 'y' }, { id: 'x' }],
        [{ id: 'x' }, { id: 'y' }],
      ],
      60,
    );
    expect(fused.map((entry) => entry.id)).toEqual(['x', 'y']);
    expect(fused[0].fused).toBe(fused[1].fused);
  });

  it('should count an id repeated within one list once, at its best rank', () => {
    const fused = reciprocalRankFusion([[{ id: 'a' }, { id: 'a' }, { id: 'b' }]], 1);
    expect(fused).toEqual([
      { id: 'a', fused: 1 / 2, ranks: [1], scores: [0] },
      { id: 'b', fused: 1 / 3, ranks: [2], scores: [0] },
    ]);
  });

  it('should handle empty lists and refuse a non-positive k', () => {
    expect(reciprocalRankFusion([[], []], 60)).toEqual([]);
    expect(() => reciprocalRankFusion([[]], 0)).toThrow(RangeError);
  });

  it('should give the best possible score for rank 1 everywhere', () => {
    expect(maxRrfScore(2, 60)).toBeCloseTo(2 / 61, 12);
  });
});
