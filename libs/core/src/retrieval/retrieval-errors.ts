import { EngramError } from '../errors/engram-error';

/**
 * A recall request that cannot be answered as asked (missing tenant or project, an impossible
 * time window, …). `field` names the offending request field, so the gRPC edge can answer
 * INVALID_ARGUMENT with a message a client can act on. Retrying cannot fix it.
 */
export class InvalidRecallRequestError extends EngramError {
  readonly code = 'INVALID_RECALL_REQUEST';
  readonly retriable = false;

  constructor(
    readonly field: string,
    problem: string,
  ) {
    super(`${field}: ${problem}`, { field });
  }
}

/**
 * Two vectors from different embedding models (or of different dimensions) were about to be
 * compared. Their cosine would be a meaningless number that still looks like a score, so it is
 * refused; the fix is `engram reindex` (re-embed with the current model).
 */
export class EmbeddingMismatchError extends EngramError {
  readonly code = 'EMBEDDING_MISMATCH';
  readonly retriable = false;
}
