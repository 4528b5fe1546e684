import {
  DownstreamUnavailableError,
  EngramError,
  errorMessage,
  MisconfigurationError,
} from '@engram/core';
import neo4j, { type Driver, Neo4jError } from 'neo4j-driver';

export interface Neo4jConnection {
  url: string;
  user?: string;
  password?: string;
}

export function createNeo4jDriver({ url, user, password }: Neo4jConnection): Driver {
  const auth = user ? neo4j.auth.basic(user, password ?? '') : undefined;
  return neo4j.driver(url, auth, {
    maxConnectionPoolSize: 20,
    connectionAcquisitionTimeout: 20_000,
  });
}

export interface Neo4jHealth {
  ok: boolean;
  detail?: string;
}

export async function neo4jHealth(driver: Driver): Promise<Neo4jHealth> {
  try {
    await driver.executeQuery('RETURN 1');
    return { ok: true };
  } catch (error) {
    return { ok: false, detail: errorMessage(error) };
  }
}

const UNAVAILABLE_CODES = new Set(['ServiceUnavailable', 'SessionExpired']);

/** Unreachable server and transient errors (deadlocks, leader switch) are retriable. */
export function classifyNeo4jError(error: unknown): unknown {
  if (error instanceof EngramError) return error;
  if (
    error instanceof Neo4jError &&
    (UNAVAILABLE_CODES.has(error.code) || error.code.startsWith('Neo.TransientError'))
  ) {
    return new DownstreamUnavailableError(
      `neo4j: ${error.message}`,
      { code: error.code },
      { cause: error },
    );
  }
  return error;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Labels, relationship types and property keys cannot be query parameters in Cypher, so any that
 * are not literals in our code must pass this check before they are spliced into a query.
 */
export function safeIdentifier(name: string): string {
  if (!IDENTIFIER.test(name)) {
    throw new MisconfigurationError(
      `'${name}' is not a safe Cypher identifier (allowed: ${IDENTIFIER.source})`,
    );
  }
  return name;
}
