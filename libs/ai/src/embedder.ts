/**
 * A sentence-embedding model. The segmenter and retrieval depend on this interface only, so the
 * model is a deployment choice (local ONNX for development and CI, an HTTP service in production).
 */
export interface Embedder {
  /**
   * Names the model and its exact artifact (e.g. `all-minilm-l6-v2-q@1.20.0-beta30`). Stored beside
   * every vector: vectors of two ids are never compared, and a new id means re-embedding.
   */
  readonly id: string;
  /** Length of every vector this embedder returns. */
  readonly dims: number;
  /** One L2-normalised vector per text, in input order, so a dot product is the cosine. */
  embed(texts: readonly string[]): Promise<Float32Array[]>;
}

// One cosine for the whole code base: it lives in @engram/core, which sees plain vectors.
export { cosine } from '@engram/core';
