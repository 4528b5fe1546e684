import { describe, expect, it } from 'vitest';
import { cosine, dot, l2Norm, l2Normalise } from './vectors';

describe('dot and l2Norm', () => {
  it('should compute the dot product and the Euclidean length', () => {
    expect(dot([1, 2, 3], [4, 5, 6])).toBe(32);
    expect(l2Norm([3, 4])).toBe(5);
  });

  it('should refuse vectors of different lengths', () => {
    expect(() => dot([1, 2], [1, 2, 3])).toThrow(RangeError);
  });
});

describe('l2Normalise', () => {
  it('should return a unit vector pointing the same way', () => {
    const unit = l2Normalise([3, 4]);
    expect(unit).toBeInstanceOf(Float32Array);
    expect(Array.from(unit)).toEqual([expect.closeTo(0.6, 6), expect.closeTo(0.8, 6)]);
    expect(l2Norm(unit)).toBeCloseTo(1, 6);
  });

  it('should map the zero vector to zeros instead of NaN', () => {
    expect(Array.from(l2Normalise([0, 0, 0]))).toEqual([0, 0, 0]);
  });
});

describe('cosine', () => {
  it('should be 1 for the same direction, 0 for orthogonal and -1 for opposite', () => {
    expect(cosine([1, 2], [2, 4])).toBeCloseTo(1, 12);
    expect(cosine([1, 0], [0, 5])).toBe(0);
    expect(cosine([1, 1], [-1, -1])).toBeCloseTo(-1, 12);
  });

  it('should mix Float32Array and number[] inputs', () => {
    expect(cosine(new Float32Array([1, 0]), [1, 1])).toBeCloseTo(Math.SQRT1_2, 6);
  });

  it('should stay within [-1, 1] despite rounding', () => {
    const v = l2Normalise([0.1, 0.7, 0.3]);
    expect(cosine(v, v)).toBeLessThanOrEqual(1);
  });

  it('should be 0 when either side is the zero vector', () => {
    expect(cosine([0, 0], [1, 1])).toBe(0);
  });

  it('should refuse vectors of different lengths (different models)', () => {
    expect(() => cosine([1, 0], [1, 0, 0])).toThrow(/lengths differ: 2 vs 3/);
  });
});
