import { DownstreamUnavailableError } from '@engram/core';
import { Neo4jError } from 'neo4j-driver';
import { describe, expect, it } from 'vitest';
import * as cypher from './observer-graph.cypher';
import { classifyGraphWriteError } from './graph-writer-driver';

const neo4jError = (code: string) => new Neo4jError('failed', code, 'N/A', 'N/A');

describe('classifyGraphWriteError', () => {
  it.each([
    'ServiceUnavailable',
    'SessionExpired',
    'Neo.TransientError.Transaction.DeadlockDetected',
    'Neo.DatabaseError.General.UnknownError',
    // The driver's own failures (connection acquisition timed out) carry no server code.
    'N/A',
    'Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration',
  ])('should make %s an outage (pause and retry, never skip)', (code) => {
    expect(classifyGraphWriteError(neo4jError(code))).toBeInstanceOf(DownstreamUnavailableError);
  });

  it('should make socket errors an outage', () => {
    const error = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    expect(classifyGraphWriteError(error)).toBeInstanceOf(DownstreamUnavailableError);
  });

  it('should leave refused writes and bugs as they are', () => {
    const refused = neo4jError('Neo.ClientError.Statement.SyntaxError');
    expect(classifyGraphWriteError(refused)).toBe(refused);
    const bug = new TypeError('x is undefined');
    expect(classifyGraphWriteError(bug)).toBe(bug);
  });
});

describe('observer Cypher', () => {
  it('should keep every value a parameter (changes show in the snapshot)', () => {
    for (const query of Object.values(cypher)) {
      expect(query).not.toMatch(/\$\{|'[^']*\$/);
    }
    expect(cypher).toMatchSnapshot();
  });
});
