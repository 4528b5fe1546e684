import { EngramError } from '@engram/core';

/**
 * The embedding service refused a request (a 4xx other than 429) or answered with something that
 * is not an embeddings reply. Retrying the same request cannot help, so it is not retriable;
 * outages are DownstreamUnavailableError instead.
 */
export class EmbeddingServiceError extends EngramError {
  readonly code = 'EMBEDDING_SERVICE_ERROR';
  readonly retriable = false;
}
