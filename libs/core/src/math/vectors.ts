/**
 * Plain vector arithmetic shared by embedders, segmentation and retrieval. Accepts any array-like
 * of numbers, so a Float32Array from a model and a number[] read back from storage mix freely.
 */
export type Vector = ArrayLike<number>;

export function dot(a: Vector, b: Vector): number {
  assertSameLength(a, b);
  let sum = 0;
  for (let i = 0; i < a.length; i += 1) sum += a[i] * b[i];
  return sum;
}

export function l2Norm(v: Vector): number {
  let sum = 0;
  for (let i = 0; i < v.length; i += 1) sum += v[i] * v[i];
  return Math.sqrt(sum);
}

/**
 * A unit-length copy, so a dot product of two results is their cosine. The zero vector has no
 * direction and is returned as zeros rather than NaNs, which would poison every later sum.
 */
export function l2Normalise(v: Vector): Float32Array {
  const norm = l2Norm(v);
  const out = new Float32Array(v.length);
  if (!(norm > 0) || !Number.isFinite(norm)) return out;
  for (let i = 0; i < v.length; i += 1) out[i] = v[i] / norm;
  return out;
}

/**
 * Cosine similarity in [-1, 1]; 0 when either side is the zero vector. Vectors of different
 * lengths come from different models and are never comparable, so that is a thrown bug, not a 0.
 */
export function cosine(a: Vector, b: Vector): number {
  const denominator = l2Norm(a) * l2Norm(b);
  if (!(denominator > 0)) return 0;
  // Clamped: float rounding can push identical unit vectors a hair past 1.
  return Math.min(1, Math.max(-1, dot(a, b) / denominator));
}

function assertSameLength(a: Vector, b: Vector): void {
  if (a.length !== b.length) {
    throw new RangeError(`vector lengths differ: ${a.length} vs ${b.length}`);
  }
}
