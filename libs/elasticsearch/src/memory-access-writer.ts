import type { Client } from '@elastic/elasticsearch';
import type { BulkResponse, MgetResponse } from '@elastic/elasticsearch/lib/api/types';
import { applyAccessUpdate, type AccessUpdate } from '@engram/core';
import { classifyElasticsearchError } from './elasticsearch-client';

// Access tracking (SPEC §7) on the memories index, without scripts (the local Elasticsearch build
// ships no painless): read the counters with their sequence numbers, compute the new values with
// the core's applyAccessUpdate, and write them back as a partial update guarded by
// if_seq_no/if_primary_term. A concurrent writer (another recall instance, the indexer) makes the
// guard fail with 409: that update is handed back to be retried on the next flush, never lost and
// never double-counted.

/** The counters of a stored memory, with the version they were read at. */
export interface StoredCounters {
  memoryId: string;
  tenantId: string;
  projectId: string;
  accessCount: number;
  lastAccessedAt: number;
  seqNo: number;
  primaryTerm: number;
}

export interface AccessWriteReport {
  applied: number;
  /** Memories deleted since they were returned (or of another scope): nothing to count. */
  missing: number;
  /** Updates that could not be applied now (a concurrent write, overload): to be requeued. */
  failed: AccessUpdate[];
}

type CounterSource = Pick<
  StoredCounters,
  'tenantId' | 'projectId' | 'accessCount' | 'lastAccessedAt'
>;

export function storedCounters(response: MgetResponse<CounterSource>): Map<string, StoredCounters> {
  const found = new Map<string, StoredCounters>();
  for (const doc of response.docs) {
    if (!('found' in doc) || !doc.found || !doc._source) continue;
    found.set(doc._id, {
      memoryId: doc._id,
      tenantId: doc._source.tenantId,
      projectId: doc._source.projectId,
      accessCount: Number(doc._source.accessCount ?? 0),
      lastAccessedAt: Number(doc._source.lastAccessedAt ?? 0),
      seqNo: doc._seq_no ?? 0,
      primaryTerm: doc._primary_term ?? 0,
    });
  }
  return found;
}

/**
 * The guarded partial updates of a batch. An update whose memory is gone, or whose stored
 * tenant/project differ from the recall's (ids are deterministic per tenant: only a bug gets
 * here), is not written.
 */
export function accessUpdateOperations(
  index: string,
  updates: readonly AccessUpdate[],
  stored: ReadonlyMap<string, StoredCounters>,
): { operations: object[]; written: AccessUpdate[]; missing: number } {
  const operations: object[] = [];
  const written: AccessUpdate[] = [];
  let missing = 0;
  for (const update of updates) {
    const current = stored.get(update.memoryId);
    if (
      !current ||
      current.tenantId !== update.tenantId ||
      current.projectId !== update.projectId
    ) {
      missing += 1;
      continue;
    }
    operations.push(
      {
        update: {
          _index: index,
          _id: update.memoryId,
          if_seq_no: current.seqNo,
          if_primary_term: current.primaryTerm,
        },
      },
      { doc: applyAccessUpdate(current, update) },
    );
    written.push(update);
  }
  return { operations, written, missing };
}

/**
 * Applies a batch of access updates. A request-level failure (outage) throws, classified; items
 * that failed (409 after a concurrent write, 429…) come back in `failed` for the caller to
 * requeue; a memory deleted in between counts as `missing`.
 */
export async function writeAccessUpdates(
  client: Client,
  index: string,
  updates: readonly AccessUpdate[],
): Promise<AccessWriteReport> {
  if (updates.length === 0) return { applied: 0, missing: 0, failed: [] };
  try {
    const stored = storedCounters(
      await client.mget<CounterSource>({
        index,
        ids: [...new Set(updates.map((update) => update.memoryId))],
        _source_includes: ['tenantId', 'projectId', 'accessCount', 'lastAccessedAt'],
      }),
    );
    const { operations, written, missing } = accessUpdateOperations(index, updates, stored);
    if (operations.length === 0) return { applied: 0, missing, failed: [] };
    const report = accessWriteReport(await client.bulk({ operations }), written);
    return { ...report, missing: report.missing + missing };
  } catch (error) {
    throw classifyElasticsearchError(error);
  }
}

export function accessWriteReport(
  response: BulkResponse,
  written: readonly AccessUpdate[],
): AccessWriteReport {
  const report: AccessWriteReport = { applied: 0, missing: 0, failed: [] };
  response.items.forEach((item, i) => {
    const result = item.update;
    if (!result?.error) report.applied += 1;
    else if (result.status === 404) report.missing += 1;
    else report.failed.push(written[i]);
  });
  return report;
}
