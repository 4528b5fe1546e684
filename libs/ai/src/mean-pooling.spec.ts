import { describe, expect, it } from 'vitest';
import { meanPoolNormalised, padBatch } from './mean-pooling';

describe('padBatch', () => {
  it('should right-pad ids with 0 and mask the padding out', () => {
    const batch = padBatch([
      [101, 5, 102],
      [101, 102],
    ]);

    expect(batch).toMatchObject({ rows: 2, cols: 3, lengths: [3, 2] });
    expect(Array.from(batch.inputIds)).toEqual([101n, 5n, 102n, 101n, 102n, 0n]);
    expect(Array.from(batch.attentionMask)).toEqual([1n, 1n, 1n, 1n, 1n, 0n]);
  });
});

describe('meanPoolNormalised', () => {
  it('should average only the real tokens of each row, then normalise', () => {
    // 2 rows × 3 positions × 2 dims; the padding position of row 1 holds junk that must be ignored.
    const hidden = new Float32Array([1, 0, 1, 2, 1, 0, /* row 1 */ 0, 3, 0, 1, 99, 99]);
    const [first, second] = meanPoolNormalised(hidden, { cols: 3, lengths: [3, 2] }, 2);

    // Row 0 sums to (3, 2); row 1 sums to (0, 4).
    expect(Array.from(first)).toEqual([
      expect.closeTo(3 / Math.sqrt(13), 6),
      expect.closeTo(2 / Math.sqrt(13), 6),
    ]);
    expect(Array.from(second)).toEqual([0, 1]);
  });
});
