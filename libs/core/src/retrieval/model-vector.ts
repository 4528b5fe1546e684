import { cosine, type Vector } from '../math/vectors';
import { EmbeddingMismatchError } from './retrieval-errors';

/**
 * A vector together with the model that produced it. Vectors of two models live in different
 * spaces: their cosine is a number, but not a similarity. So every vector retrieval touches
 * carries its model id and dimension, and comparisons check both.
 */
export interface ModelVector {
  /** The embedder id stored beside the vector (e.g. `all-minilm-l6-v2-q@1.20.0-beta30`). */
  model: string;
  dimension: number;
  vector: Vector;
}

export type VectorMismatch = 'model' | 'dimension';

/** A ModelVector whose dimension is the vector's length. */
export function modelVector(model: string, vector: Vector): ModelVector {
  return { model, dimension: vector.length, vector };
}

/**
 * A stored embedding as a ModelVector; null when the document has no vector or no model id (a
 * vector of unknown origin cannot be compared safely).
 */
export function storedVector(
  embedding: Vector | null | undefined,
  model: string | null | undefined,
): ModelVector | null {
  if (!embedding || embedding.length === 0 || !model) return null;
  return modelVector(model, embedding);
}

/** Why `a` and `b` cannot be compared, or null when they can. */
export function vectorMismatch(a: ModelVector, b: ModelVector): VectorMismatch | null {
  if (a.model !== b.model) return 'model';
  if (
    a.dimension !== b.dimension ||
    a.vector.length !== a.dimension ||
    b.vector.length !== b.dimension
  ) {
    return 'dimension';
  }
  return null;
}

export function assertComparable(a: ModelVector, b: ModelVector): void {
  const mismatch = vectorMismatch(a, b);
  if (mismatch === null) return;
  throw new EmbeddingMismatchError(
    `cannot compare ${a.model}/${a.dimension} with ${b.model}/${b.dimension} (${mismatch} differs); run engram reindex`,
    {
      left: { model: a.model, dimension: a.dimension },
      right: { model: b.model, dimension: b.dimension },
    },
  );
}

/** Cosine of two vectors of the same model and dimension; throws EmbeddingMismatchError otherwise. */
export function modelCosine(a: ModelVector, b: ModelVector): number {
  assertComparable(a, b);
  return cosine(a.vector, b.vector);
}
