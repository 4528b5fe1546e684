import { DownstreamUnavailableError, MisconfigurationError } from '@engram/core';
import { Neo4jError } from 'neo4j-driver';
import { describe, expect, it } from 'vitest';
import { classifyNeo4jError, safeIdentifier } from './neo4j-client';

describe('safeIdentifier', () => {
  it('should accept plain identifiers', () => {
    expect(safeIdentifier('CO_ACCESSED')).toBe('CO_ACCESSED');
  });

  it.each(['File) DETACH DELETE n //', 'a-b', '1abc', '', 'x`y'])('should refuse %j', (name) => {
    expect(() => safeIdentifier(name)).toThrow(MisconfigurationError);
  });
});

describe('classifyNeo4jError', () => {
  it('should make an unreachable server retriable', () => {
    const error = new Neo4jError('connection refused', 'ServiceUnavailable', 'N/A', 'N/A');
    expect(classifyNeo4jError(error)).toBeInstanceOf(DownstreamUnavailableError);
  });

  it('should make transient errors retriable', () => {
    const error = new Neo4jError(
      'deadlock',
      'Neo.TransientError.Transaction.DeadlockDetected',
      'N/A',
      'N/A',
    );
    expect(classifyNeo4jError(error)).toBeInstanceOf(DownstreamUnavailableError);
  });

  it('should leave client errors as they are', () => {
    const error = new Neo4jError(
      'bad syntax',
      'Neo.ClientError.Statement.SyntaxError',
      'N/A',
      'N/A',
    );
    expect(classifyNeo4jError(error)).toBe(error);
  });
});
