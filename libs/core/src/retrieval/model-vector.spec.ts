import { describe, expect, it } from 'vitest';
import {
  assertComparable,
  modelCosine,
  modelVector,
  storedVector,
  vectorMismatch,
} from './model-vector';
import { EmbeddingMismatchError } from './retrieval-errors';

describe('model vectors', () => {
  it('should compare vectors of one model and dimension', () => {
    expect(modelCosine(modelVector('m', [1, 1]), modelVector('m', [1, 0]))).toBeCloseTo(
      Math.SQRT1_2,
      12,
    );
  });

  it('should refuse vectors of different models even when the dimensions agree', () => {
    expect(vectorMismatch(modelVector('m1', [1, 0]), modelVector('m2', [1, 0]))).toBe('model');
    expect(() => modelCosine(modelVector('m1', [1, 0]), modelVector('m2', [1, 0]))).toThrow(
      EmbeddingMismatchError,
    );
  });

  it('should refuse different dimensions, or a vector that contradicts its declared dimension', () => {
    expect(vectorMismatch(modelVector('m', [1, 0]), modelVector('m', [1, 0, 0]))).toBe('dimension');
    expect(
      vectorMismatch(
        { model: 'm', dimension: 3, vector: [1, 0] },
        { model: 'm', dimension: 3, vector: [1, 0] },
      ),
    ).toBe('dimension');
    expect(() => assertComparable(modelVector('m', [1]), modelVector('m', [1, 2]))).toThrow(
      /reindex/,
    );
  });

  it('should not treat a vector of unknown model as comparable', () => {
    expect(storedVector([1, 2], null)).toBeNull();
    expect(storedVector([], 'm')).toBeNull();
    expect(storedVector([1, 2], 'm')).toEqual({ model: 'm', dimension: 2, vector: [1, 2] });
  });
});
