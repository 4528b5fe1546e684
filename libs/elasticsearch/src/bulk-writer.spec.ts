import { errors } from '@elastic/elasticsearch';
import type { BulkResponse, BulkResponseItem } from '@elastic/elasticsearch/lib/api/types';
import { DownstreamUnavailableError } from '@engram/core';
import { describe, expect, it, vi } from 'vitest';
import {
  BulkWriter,
  chunkOperations,
  classifyBulkRequestError,
  classifyItemFailure,
  DocumentRejectedError,
  serialiseOperation,
  type BulkOperation,
  type BulkSend,
} from './bulk-writer';

const index = (id: string, document: object = { text: id }): BulkOperation => ({
  action: 'index',
  index: 'engram-memories',
  id,
  document,
});
const remove = (id: string): BulkOperation => ({ action: 'delete', index: 'engram-memories', id });

type Outcome = { status: number; result?: string; error?: { type: string; reason: string } };

/** A bulk response with one item per operation line pair: created, unless `outcomes` says else. */
function responseFor(lines: string[], outcomes: Record<string, Outcome> = {}): BulkResponse {
  const items: Partial<Record<string, BulkResponseItem>>[] = [];
  for (const line of lines) {
    const parsed = JSON.parse(line) as Record<string, { _index?: string; _id?: string }>;
    const [action] = Object.keys(parsed);
    if (action !== 'index' && action !== 'delete') continue;
    const id = parsed[action]._id!;
    const outcome = outcomes[id] ?? {
      status: action === 'index' ? 201 : 200,
      result: action === 'index' ? 'created' : 'deleted',
    };
    items.push({ [action]: { _index: 'engram-memories', _id: id, ...outcome } });
  }
  return {
    took: 1,
    errors: items.some((item) => Object.values(item)[0]?.error),
    items,
  };
}

function setup(outcomes: Record<string, Outcome> = {}) {
  const requests: string[][] = [];
  const send = vi.fn<BulkSend>((lines) => {
    requests.push(lines);
    return Promise.resolve(responseFor(lines, outcomes));
  });
  return { send, requests };
}

describe('chunkOperations', () => {
  const ops = ['a', 'b', 'c', 'd', 'e'].map((id) => serialiseOperation(index(id)));

  it('should cut at the operation limit, keeping order', () => {
    const chunks = chunkOperations(ops, { maxOperations: 2, maxBytes: 1e9 });
    expect(chunks.map((chunk) => chunk.map((op) => op.operation.id))).toEqual([
      ['a', 'b'],
      ['c', 'd'],
      ['e'],
    ]);
  });

  it('should cut at the byte limit, and send an oversize operation alone', () => {
    const big = serialiseOperation(index('big', { text: 'x'.repeat(500) }));
    const chunks = chunkOperations([ops[0], ops[1], big, ops[2]], {
      maxOperations: 100,
      maxBytes: ops[0].bytes * 2,
    });
    expect(chunks.map((chunk) => chunk.map((op) => op.operation.id))).toEqual([
      ['a', 'b'],
      ['big'],
      ['c'],
    ]);
  });

  it('should refuse limits below one', () => {
    expect(() => chunkOperations(ops, { maxOperations: 0, maxBytes: 10 })).toThrow(RangeError);
  });
});

describe('serialiseOperation', () => {
  it('should write an action line and a document line, and count their bytes', () => {
    const op = serialiseOperation(index('é', { text: 'ü' }));
    expect(op.lines).toEqual(['{"index":{"_index":"engram-memories","_id":"é"}}', '{"text":"ü"}']);
    expect(op.bytes).toBe(Buffer.byteLength(op.lines.map((line) => `${line}\n`).join('')));
  });

  it('should write a delete as one line', () => {
    expect(serialiseOperation(remove('m1')).lines).toEqual([
      '{"delete":{"_index":"engram-memories","_id":"m1"}}',
    ]);
  });
});

describe('classifyItemFailure', () => {
  it.each([
    [429, 'es_rejected_execution_exception', 'retriable'],
    [503, 'unavailable_shards_exception', 'retriable'],
    [500, 'internal_server_error', 'retriable'],
    [408, 'timeout', 'retriable'],
    [403, 'cluster_block_exception', 'retriable'],
    [404, 'index_not_found_exception', 'retriable'],
    [400, 'document_parsing_exception', 'rejected'],
    [400, 'strict_dynamic_mapping_exception', 'rejected'],
    [400, 'illegal_argument_exception', 'rejected'],
    [409, 'version_conflict_engine_exception', 'rejected'],
  ] as const)('should classify %i %s as %s', (status, type, kind) => {
    expect(classifyItemFailure(status, type)).toBe(kind);
  });
});

describe('classifyBulkRequestError', () => {
  const responseError = (statusCode: number) =>
    new errors.ResponseError({
      body: { error: { type: 'x', reason: 'y' } },
      statusCode,
      headers: {},
      warnings: null,
      meta: {} as never,
    });

  it('should retry a refused connection and any 5xx', () => {
    expect(classifyBulkRequestError(new errors.ConnectionError('refused'))).toBeInstanceOf(
      DownstreamUnavailableError,
    );
    expect(classifyBulkRequestError(responseError(500))).toBeInstanceOf(DownstreamUnavailableError);
    expect(classifyBulkRequestError(responseError(429))).toBeInstanceOf(DownstreamUnavailableError);
  });

  it('should reject a request Elasticsearch refused as malformed', () => {
    expect(classifyBulkRequestError(responseError(400))).toBeInstanceOf(DocumentRejectedError);
  });
});

describe('BulkWriter', () => {
  describe('write', () => {
    it('should send bounded requests and report what was applied', async () => {
      const { send, requests } = setup({ gone: { status: 404, result: 'not_found' } });
      const writer = new BulkWriter(send, { maxOperations: 2, maxBytes: 1e6 });
      const report = await writer.write([index('a'), index('b'), remove('c'), remove('gone')]);
      expect(requests).toHaveLength(2);
      expect(report).toEqual({ requests: 2, indexed: 2, deleted: 1, alreadyAbsent: 1 });
    });

    it('should throw DownstreamUnavailableError on a retriable item, without sending more', async () => {
      const { send } = setup({
        b: {
          status: 429,
          error: { type: 'es_rejected_execution_exception', reason: 'queue full' },
        },
      });
      const writer = new BulkWriter(send, { maxOperations: 2, maxBytes: 1e6 });
      const failure = writer.write([index('a'), index('b'), index('c')]);
      await expect(failure).rejects.toBeInstanceOf(DownstreamUnavailableError);
      await expect(failure).rejects.toThrow(/queue full/);
      expect(send).toHaveBeenCalledTimes(1);
    });

    it('should write everything else, then throw DocumentRejectedError naming the rejected document', async () => {
      const { send } = setup({
        b: {
          status: 400,
          error: { type: 'document_parsing_exception', reason: 'failed to parse field [tags]' },
        },
      });
      const writer = new BulkWriter(send, { maxOperations: 2, maxBytes: 1e6 });
      const failure = writer.write([index('a'), index('b'), index('c')]);
      await expect(failure).rejects.toBeInstanceOf(DocumentRejectedError);
      await expect(failure).rejects.toThrow(
        /rejected 1 of 3 operations: index engram-memories\/b: 400 document_parsing_exception: failed to parse field \[tags\]/,
      );
      expect(send).toHaveBeenCalledTimes(2);
    });

    it('should classify a failed request (an outage is retriable)', async () => {
      const writer = new BulkWriter(() =>
        Promise.reject(new errors.ConnectionError('ECONNREFUSED')),
      );
      await expect(writer.write([index('a')])).rejects.toBeInstanceOf(DownstreamUnavailableError);
    });

    it('should send nothing for no operations', async () => {
      const { send } = setup();
      expect(await new BulkWriter(send).write([])).toEqual({
        requests: 0,
        indexed: 0,
        deleted: 0,
        alreadyAbsent: 0,
      });
      expect(send).not.toHaveBeenCalled();
    });
  });
});
