import {
  DownstreamUnavailableError,
  EngramError,
  errorMessage,
  isProgrammerError,
} from '@engram/core';
import neo4j, { type Driver, Neo4jError } from 'neo4j-driver';
import { classifyNeo4jError, type Neo4jConnection } from './neo4j-client';

/**
 * A driver for a stream sink: it fails fast instead of retrying for the driver's default 30 s, so
 * the consumer (whose Kafka transaction and group session are open meanwhile) can pause the
 * partition and retry with its own backoff. Transient errors (deadlocks) are still retried, briefly.
 */
export function createGraphWriterDriver(
  { url, user, password }: Neo4jConnection,
  { retryWithinMs = 5_000 }: { retryWithinMs?: number } = {},
): Driver {
  const auth = user ? neo4j.auth.basic(user, password ?? '') : undefined;
  return neo4j.driver(url, auth, {
    maxConnectionPoolSize: 20,
    connectionTimeout: 5_000,
    connectionAcquisitionTimeout: 10_000,
    maxTransactionRetryTime: retryWithinMs,
  });
}

/**
 * Errors of a graph write, classified once (SPEC §11): an unreachable or failing server is
 * DownstreamUnavailableError (the consumer pauses and retries for as long as it takes, never
 * skipping); a write the server refuses for what it is (a client error) stays as it is.
 */
export function classifyGraphWriteError(error: unknown): unknown {
  const classified = classifyNeo4jError(error);
  if (classified !== error || error instanceof EngramError || isProgrammerError(error)) {
    return classified;
  }
  const unavailable =
    error instanceof Neo4jError
      ? error.retryable ||
        !error.code.startsWith('Neo.ClientError.') ||
        /TransactionTimedOut|LockClientStopped/.test(error.code)
      : isSocketError(error);
  if (!unavailable) return error;
  const code = error instanceof Neo4jError ? error.code : (error as { code?: string }).code;
  return new DownstreamUnavailableError(
    `neo4j: ${errorMessage(error)}`,
    { code },
    { cause: error },
  );
}

/** Neo4j refused the transaction for its memory: the total pool's limit or one transaction's. */
export function isOverTransactionMemory(error: unknown): boolean {
  return (
    error instanceof Neo4jError &&
    /^Neo\.TransientError\.General\.(MemoryPoolOutOfMemoryError|TransactionMemoryLimit)$/.test(
      error.code,
    )
  );
}

function isSocketError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return error instanceof Error && typeof code === 'string' && /^E[A-Z]+$/.test(code);
}
