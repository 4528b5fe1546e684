import { errors, type Client } from '@elastic/elasticsearch';
import type { BulkResponse } from '@elastic/elasticsearch/lib/api/types';
import { DownstreamUnavailableError, EngramError, errorMessage } from '@engram/core';
import { classifyElasticsearchError } from './elasticsearch-client';

/** An idempotent write by explicit `_id`: `index` replaces the document, `delete` removes it. */
export type BulkOperation =
  | { action: 'index'; index: string; id: string; document: object }
  | { action: 'delete'; index: string; id: string };

export interface BulkLimits {
  /** Operations per bulk request. */
  maxOperations: number;
  /** Bytes of NDJSON per bulk request (a single larger operation still goes, alone). */
  maxBytes: number;
}

/** Elastic's guidance is 5–15 MB per request; vectors make documents about 5 KB each. */
export const DEFAULT_BULK_LIMITS: BulkLimits = { maxOperations: 500, maxBytes: 5 * 1024 * 1024 };

/** An operation serialised once: its NDJSON lines and their size. */
export interface SerialisedOperation {
  operation: BulkOperation;
  lines: string[];
  bytes: number;
}

export function serialiseOperation(operation: BulkOperation): SerialisedOperation {
  const meta = { _index: operation.index, _id: operation.id };
  const lines =
    operation.action === 'index'
      ? [JSON.stringify({ index: meta }), JSON.stringify(operation.document)]
      : [JSON.stringify({ delete: meta })];
  const bytes = lines.reduce((sum, line) => sum + Buffer.byteLength(line) + 1, 0);
  return { operation, lines, bytes };
}

/** Consecutive requests within both limits, in input order (order matters for the same `_id`). */
export function chunkOperations(
  operations: readonly SerialisedOperation[],
  limits: BulkLimits,
): SerialisedOperation[][] {
  if (limits.maxOperations < 1 || limits.maxBytes < 1) {
    throw new RangeError(`bulk limits must be positive: ${JSON.stringify(limits)}`);
  }
  const chunks: SerialisedOperation[][] = [];
  let current: SerialisedOperation[] = [];
  let bytes = 0;
  for (const op of operations) {
    if (
      current.length > 0 &&
      (current.length >= limits.maxOperations || bytes + op.bytes > limits.maxBytes)
    ) {
      chunks.push(current);
      current = [];
      bytes = 0;
    }
    current.push(op);
    bytes += op.bytes;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

export type ItemFailureKind = 'retriable' | 'rejected';

export interface BulkItemFailure {
  operation: BulkOperation;
  status: number;
  type: string;
  reason: string;
  kind: ItemFailureKind;
}

/**
 * Error types that say "not now", whatever their status: the cluster is overloaded, blocked
 * (read-only after a disk flood, closed index) or has lost shards. Retried, never dead-lettered.
 */
const RETRIABLE_TYPES = new Set([
  'es_rejected_execution_exception',
  'circuit_breaking_exception',
  'cluster_block_exception',
  'index_closed_exception',
  'index_not_found_exception',
  'unavailable_shards_exception',
  'no_shard_available_action_exception',
  'node_not_connected_exception',
  'process_cluster_event_timeout_exception',
]);

/**
 * What to do with a failed bulk item: 408, 429 and 5xx (and the types above) are the cluster's
 * state — retry; any other 4xx is the document's own fault (a mapping error, an immense term) —
 * dead-letter it with the reason.
 */
export function classifyItemFailure(status: number, type: string): ItemFailureKind {
  if (RETRIABLE_TYPES.has(type)) return 'retriable';
  if (status === 408 || status === 429 || status >= 500) return 'retriable';
  return 'rejected';
}

/** Elasticsearch refused documents for good; the consumer dead-letters them with this message. */
export class DocumentRejectedError extends EngramError {
  readonly code = 'DOCUMENT_REJECTED';
  readonly retriable = false;
}

const MAX_REASON_LENGTH = 500;

function describe(failure: BulkItemFailure): string {
  return `${failure.operation.action} ${failure.operation.index}/${failure.operation.id}: ${failure.status} ${failure.type}: ${failure.reason}`;
}

interface ItemError {
  type?: string;
  reason?: string | null;
  caused_by?: ItemError;
}

function reasonOf(error: ItemError): string {
  const own = error.reason ?? '';
  const cause = error.caused_by
    ? ` (caused by ${error.caused_by.type ?? 'error'}: ${error.caused_by.reason ?? ''})`
    : '';
  return `${own}${cause}`.slice(0, MAX_REASON_LENGTH);
}

/** The failed items of a bulk response, classified (a delete of a missing document is success). */
export function bulkFailures(
  response: BulkResponse,
  operations: readonly BulkOperation[],
): BulkItemFailure[] {
  const failures: BulkItemFailure[] = [];
  response.items.forEach((item, i) => {
    const result = item.index ?? item.delete ?? item.create ?? item.update;
    if (!result?.error) return;
    const type = result.error.type ?? 'unknown';
    failures.push({
      operation: operations[i],
      status: result.status,
      type,
      reason: reasonOf(result.error),
      kind: classifyItemFailure(result.status, type),
    });
  });
  return failures;
}

/** Whole-request failures: outages and 5xx are retried; a refused request (400) is rejected. */
export function classifyBulkRequestError(error: unknown): unknown {
  if (error instanceof errors.ResponseError) {
    const status = error.statusCode ?? 0;
    if (status >= 500) {
      return new DownstreamUnavailableError(
        `elasticsearch: ${errorMessage(error)}`,
        {},
        { cause: error },
      );
    }
    if (status === 400 || status === 413) {
      return new DocumentRejectedError(
        `elasticsearch refused the bulk request: ${errorMessage(error).slice(0, MAX_REASON_LENGTH)}`,
        { status },
        { cause: error },
      );
    }
  }
  return classifyElasticsearchError(error);
}

export interface BulkReport {
  requests: number;
  indexed: number;
  deleted: number;
  /** Deletes of documents that were not there (a replayed tombstone): success. */
  alreadyAbsent: number;
}

/** Sends one bulk request of pre-serialised NDJSON lines. */
export type BulkSend = (lines: string[]) => Promise<BulkResponse>;

export function clientBulkSend(client: Client): BulkSend {
  // The transport writes string entries as they are: each operation is serialised only once.
  return (lines) => client.bulk({ operations: lines as unknown as object[] });
}

/**
 * Writes operations in bounded bulk requests. It either returns (every operation applied) or
 * throws a classified error: DownstreamUnavailableError when anything failed for a retriable
 * reason (at once, without sending more), DocumentRejectedError when everything else was applied
 * but some documents were refused. Every operation is idempotent, so retrying the whole call —
 * what the consumer does — is safe.
 */
export class BulkWriter {
  constructor(
    private readonly send: BulkSend,
    private readonly limits: BulkLimits = DEFAULT_BULK_LIMITS,
  ) {}

  static forClient(client: Client, limits?: BulkLimits): BulkWriter {
    return new BulkWriter(clientBulkSend(client), limits);
  }

  async write(operations: readonly BulkOperation[]): Promise<BulkReport> {
    const report: BulkReport = { requests: 0, indexed: 0, deleted: 0, alreadyAbsent: 0 };
    const rejected: BulkItemFailure[] = [];
    for (const chunk of chunkOperations(operations.map(serialiseOperation), this.limits)) {
      let response: BulkResponse;
      try {
        response = await this.send(chunk.flatMap((op) => op.lines));
      } catch (error) {
        throw classifyBulkRequestError(error);
      }
      report.requests += 1;
      const ops = chunk.map((op) => op.operation);
      const failures = response.errors ? bulkFailures(response, ops) : [];
      const retriable = failures.filter((failure) => failure.kind === 'retriable');
      if (retriable.length > 0) {
        throw new DownstreamUnavailableError(
          `elasticsearch could not apply ${retriable.length} of ${ops.length} operations now: ${describe(retriable[0])}`,
          { failures: retriable.map(describe) },
        );
      }
      rejected.push(...failures);
      countApplied(response, report);
    }
    if (rejected.length > 0) {
      throw new DocumentRejectedError(
        `elasticsearch rejected ${rejected.length} of ${operations.length} operations: ${rejected.map(describe).join('; ')}`.slice(
          0,
          2 * MAX_REASON_LENGTH,
        ),
        { failures: rejected.map(describe) },
      );
    }
    return report;
  }
}

function countApplied(response: BulkResponse, report: BulkReport): void {
  for (const item of response.items) {
    if (item.index && !item.index.error) report.indexed += 1;
    else if (item.delete && !item.delete.error) {
      if (item.delete.result === 'not_found') report.alreadyAbsent += 1;
      else report.deleted += 1;
    }
  }
}
