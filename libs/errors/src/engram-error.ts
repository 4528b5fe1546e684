/**
 * Errors are classified once, at the adapter edge; consumers act on the class:
 * retriable → pause and retry with backoff (never skip); not retriable → dead-letter and go on.
 */
export abstract class EngramError extends Error {
  abstract readonly code: string;
  abstract readonly retriable: boolean;

  constructor(
    message: string,
    readonly context: Record<string, unknown> = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Bytes that are not a Confluent-framed Avro record of a known schema. */
export class DecodeError extends EngramError {
  readonly code = 'DECODE_ERROR';
  readonly retriable = false;
}

/** The schema id in the frame is unknown to the registry. */
export class SchemaNotFoundError extends EngramError {
  readonly code = 'SCHEMA_NOT_FOUND';
  readonly retriable = false;
}

/** Schema-valid but semantically invalid (missing ids, oversize text, impossible values). */
export class InvalidEventError extends EngramError {
  readonly code = 'INVALID_EVENT';
  readonly retriable = false;
}

/** A downstream system (Kafka, registry, Elasticsearch, Neo4j) is unreachable or overloaded. */
export class DownstreamUnavailableError extends EngramError {
  readonly code = 'DOWNSTREAM_UNAVAILABLE';
  readonly retriable = true;
}

/** Configuration that cannot work; raised at construction with the fix in the message. */
export class MisconfigurationError extends EngramError {
  readonly code = 'MISCONFIGURATION';
  readonly retriable = false;
}

const PROGRAMMER_ERRORS = [TypeError, RangeError, ReferenceError, SyntaxError];

/** Bugs are never retried: retrying cannot fix them, and it would stall the partition. */
export function isProgrammerError(error: unknown): boolean {
  return PROGRAMMER_ERRORS.some((kind) => error instanceof kind);
}

export function errorClassName(error: unknown): string {
  return error instanceof Error ? error.name : typeof error;
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
