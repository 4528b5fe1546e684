import type { Client } from '@elastic/elasticsearch';
import type {
  BulkResponse,
  MgetRequest,
  MgetResponse,
  MgetResponseItem,
} from '@elastic/elasticsearch/lib/api/types';
import {
  applyAccessUpdate,
  effectiveAccess,
  type AccessCounts,
  type AccessUpdate,
} from '@engram/core';
import type { AccessCounterMirror, MirroredCounter } from './access-counter-mirror';
import { classifyElasticsearchError } from './elasticsearch-client';

// Access tracking (SPEC §7) on Elasticsearch. A memory's counters live in a document of their own
// in the memory-access index (`_id` = memoryId; see memoryAccessMapping for why not in the memory
// document), seeded from the memory's record when first written; readers see the larger of the
// two (core `effectiveAccess`). Without scripts (the local Elasticsearch build ships no painless),
// a write starts from the counters with their sequence numbers — a recall server's in-memory
// mirror of them (AccessCounterMirror), else read with an `_mget` — computes the new values with
// the core's applyAccessUpdate, and writes them guarded: an `index` with if_seq_no/if_primary_term
// for an existing counter, `create` for a new one. A concurrent writer (another recall instance)
// makes the guard fail with 409: that update is handed back to be retried on the next flush,
// never lost, never doubled.

/** Where the counters of memories are: the memory documents, and the counters apart. */
export interface AccessIndices {
  memories: string;
  memoryAccess: string;
}

/** A memory's counters as a writer read them, with the version of its counter document. */
export interface StoredCounters extends AccessCounts {
  memoryId: string;
  tenantId: string;
  projectId: string;
  /** null: no counter document yet (the memory was never returned, or not since its record). */
  version: { seqNo: number; primaryTerm: number } | null;
}

export interface AccessWriteReport {
  applied: number;
  /** Memories deleted since they were returned (or of another scope): nothing to count. */
  missing: number;
  /** Updates that could not be applied now (a concurrent write, overload): to be requeued. */
  failed: AccessUpdate[];
}

/** A counter as a write leaves it. */
export interface WrittenCounter extends AccessCounts {
  memoryId: string;
  tenantId: string;
  projectId: string;
}

/** The scope and counters a memory document or a counter document holds. */
export type CounterSource = {
  tenantId: string;
  projectId: string;
  accessCount?: number;
  lastAccessedAt?: number;
};

export const COUNTER_FIELDS = ['tenantId', 'projectId', 'accessCount', 'lastAccessedAt'];

/** The counts of a memory or counter document (absent fields: never accessed). */
export function countsOf(source: CounterSource): AccessCounts {
  return {
    accessCount: Number(source.accessCount ?? 0),
    lastAccessedAt: Number(source.lastAccessedAt ?? 0),
  };
}

/** A found `_mget` doc with its version; null when it is missing. */
export function foundSource(
  doc: MgetResponseItem<CounterSource> | undefined,
): (CounterSource & { seqNo: number; primaryTerm: number }) | null {
  if (!doc || !('found' in doc) || !doc.found || !doc._source) return null;
  return { ...doc._source, seqNo: doc._seq_no ?? 0, primaryTerm: doc._primary_term ?? 0 };
}

/** One mget for a write: each memory's document, then its counter document. */
export function countersRequest(indices: AccessIndices, memoryIds: readonly string[]): MgetRequest {
  return {
    docs: memoryIds.flatMap((id) => [
      { _index: indices.memories, _id: id, _source: COUNTER_FIELDS },
      { _index: indices.memoryAccess, _id: id, _source: COUNTER_FIELDS },
    ]),
  };
}

/** The counters of the memories that exist, from the answer to countersRequest. */
export function storedCounters(
  memoryIds: readonly string[],
  response: MgetResponse<CounterSource>,
): Map<string, StoredCounters> {
  const found = new Map<string, StoredCounters>();
  memoryIds.forEach((memoryId, i) => {
    const memory = foundSource(response.docs[2 * i]);
    if (!memory) return;
    const counter = foundSource(response.docs[2 * i + 1]);
    found.set(memoryId, {
      memoryId,
      tenantId: memory.tenantId,
      projectId: memory.projectId,
      ...effectiveAccess(countsOf(memory), counter && countsOf(counter)),
      version: counter && { seqNo: counter.seqNo, primaryTerm: counter.primaryTerm },
    });
  });
  return found;
}

/**
 * The guarded counter writes of a batch. An update whose memory is gone, or whose stored
 * tenant/project differ from the recall's (ids are deterministic per tenant: only a bug gets
 * here), is not written.
 */
export function accessUpdateOperations(
  accessIndex: string,
  updates: readonly AccessUpdate[],
  stored: ReadonlyMap<string, StoredCounters>,
): {
  operations: object[];
  written: AccessUpdate[];
  /** What each written update makes of its counter (same order as `written`). */
  counters: WrittenCounter[];
  missing: number;
} {
  const operations: object[] = [];
  const written: AccessUpdate[] = [];
  const counters: WrittenCounter[] = [];
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
    const counts = applyAccessUpdate(current, update);
    const { memoryId, tenantId, projectId, version } = current;
    // The whole (small) document, guarded: an `update` would make Elasticsearch read the stored
    // one first — measured 44 against 16 ms for a bulk of 500 counters.
    const guard = version
      ? {
          index: {
            _index: accessIndex,
            _id: memoryId,
            if_seq_no: version.seqNo,
            if_primary_term: version.primaryTerm,
          },
        }
      : { create: { _index: accessIndex, _id: memoryId } };
    operations.push(guard, { tenantId, projectId, memoryId, ...counts });
    written.push(update);
    counters.push({ memoryId, tenantId, projectId, ...counts });
  }
  return { operations, written, counters, missing };
}

/**
 * Applies a batch of access updates. A request-level failure (outage) throws, classified; items
 * that failed (409 after a concurrent write, 429…) come back in `failed` for the caller to
 * requeue; a memory deleted in between counts as `missing`. With a mirror, the counters to start
 * from come from it (or, for a first counter, from the counts the reader saw) instead of an
 * `_mget`, and what was written goes back into it.
 */
export async function writeAccessUpdates(
  client: Client,
  indices: AccessIndices,
  updates: readonly AccessUpdate[],
  mirror: AccessCounterMirror | null = null,
): Promise<AccessWriteReport> {
  if (updates.length === 0) return { applied: 0, missing: 0, failed: [] };
  let response: BulkResponse;
  let planned: ReturnType<typeof accessUpdateOperations>;
  try {
    const stored = await countersToUpdate(client, indices, updates, mirror);
    planned = accessUpdateOperations(indices.memoryAccess, updates, stored);
    if (planned.operations.length === 0) {
      return { applied: 0, missing: planned.missing, failed: [] };
    }
    response = await client.bulk({ operations: planned.operations });
  } catch (error) {
    throw classifyElasticsearchError(error);
  }
  const report = accessWriteReport(response, planned.written);
  const deleted = mirror ? await mirrorWrites(mirror, response, planned.counters) : new Set();
  // A guarded write refused because its counter is gone: the memory's tombstone deleted both.
  const failed = report.failed.filter((update) => !deleted.has(update.memoryId));
  return {
    applied: report.applied,
    missing: report.missing + planned.missing + report.failed.length - failed.length,
    failed,
  };
}

/**
 * The counters a batch of updates starts from: the mirror's, with their version; for a memory
 * the mirror holds no counter of, the counts its reader saw (version null: the write creates the
 * counter); whatever is left is read from Elasticsearch, record and counter (countersRequest).
 */
async function countersToUpdate(
  client: Client,
  indices: AccessIndices,
  updates: readonly AccessUpdate[],
  mirror: AccessCounterMirror | null,
): Promise<Map<string, StoredCounters>> {
  const stored = new Map<string, StoredCounters>();
  const unread = new Set<string>();
  for (const update of updates) {
    const known = mirror?.ready ? mirroredCounters(update, mirror.get(update.memoryId)) : null;
    if (known) stored.set(update.memoryId, known);
    else unread.add(update.memoryId);
  }
  if (unread.size > 0) {
    const ids = [...unread];
    const read = storedCounters(
      ids,
      await client.mget<CounterSource>(countersRequest(indices, ids)),
    );
    read.forEach((counters, id) => stored.set(id, counters));
  }
  return stored;
}

/** An update's starting counters from the mirror, or from what its reader saw; null: unknown. */
export function mirroredCounters(
  update: AccessUpdate,
  counter: MirroredCounter | undefined,
): StoredCounters | null {
  const { memoryId } = update;
  if (counter) {
    const { tenantId, projectId, seqNo, primaryTerm } = counter;
    return {
      memoryId,
      tenantId,
      projectId,
      ...(update.seen ? effectiveAccess(update.seen, counter) : countsOf(counter)),
      version: { seqNo, primaryTerm },
    };
  }
  if (!update.seen) return null;
  const { tenantId, projectId } = update;
  return { memoryId, tenantId, projectId, ...update.seen, version: null };
}

/**
 * What a bulk of counter writes did, into the mirror: written counters with their new version;
 * refused ones (409: another writer got there first, or the counter was deleted) read again, so
 * that a retry starts from what is stored. Returns the refused memories whose counter no longer
 * exists. Never throws: the writes are done, and failing now would count them twice.
 */
async function mirrorWrites(
  mirror: AccessCounterMirror,
  response: BulkResponse,
  counters: readonly WrittenCounter[],
): Promise<Set<string>> {
  const refused: string[] = [];
  response.items.forEach((item, i) => {
    const result = item.index ?? item.create;
    const { memoryId, ...counter } = counters[i];
    if (result && !result.error && result._seq_no !== undefined) {
      const version = { seqNo: result._seq_no, primaryTerm: result._primary_term ?? 0 };
      mirror.written(memoryId, { ...counter, ...version });
    } else if (result?.status === 409) refused.push(memoryId);
  });
  try {
    const absent = await mirror.reread(refused);
    const guarded = new Set(
      response.items.flatMap((item, i) => (item.index ? [counters[i].memoryId] : [])),
    );
    return new Set([...absent].filter((id) => guarded.has(id)));
  } catch {
    mirror.forget(refused); // unknown now: the retry reads record and counter from Elasticsearch
    return new Set();
  }
}

export function accessWriteReport(
  response: BulkResponse,
  written: readonly AccessUpdate[],
): AccessWriteReport {
  const report: AccessWriteReport = { applied: 0, missing: 0, failed: [] };
  response.items.forEach((item, i) => {
    const result = item.index ?? item.create ?? item.update;
    if (!result?.error) report.applied += 1;
    // The counter was deleted in between: its memory's tombstone removed both.
    else if (result.status === 404) report.missing += 1;
    else report.failed.push(written[i]);
  });
  return report;
}

/** Counters of memories read for ranking, by memoryId. */
export type CountedAccess = Map<string, AccessCounts & { tenantId: string; projectId: string }>;

/**
 * The counter documents of these memories, as of the last refresh (`realtime: false`: a recall
 * reads what searches see and never forces a refresh; a count lags by at most the refresh
 * interval, nothing for a prior measured in days and log-counts).
 */
export async function readAccessCounters(
  client: Client,
  accessIndex: string,
  memoryIds: readonly string[],
): Promise<CountedAccess> {
  const counted: CountedAccess = new Map();
  if (memoryIds.length === 0) return counted;
  try {
    const response = await client.mget<CounterSource>({
      index: accessIndex,
      ids: [...memoryIds],
      realtime: false,
      _source: COUNTER_FIELDS,
    });
    for (const doc of response.docs) {
      const counter = foundSource(doc);
      if (counter) {
        counted.set(doc._id, {
          ...countsOf(counter),
          tenantId: counter.tenantId,
          projectId: counter.projectId,
        });
      }
    }
    return counted;
  } catch (error) {
    throw classifyElasticsearchError(error);
  }
}

/**
 * Memory documents with their effective counters: each counter of the same tenant and project
 * is folded into its memory's accessCount and lastAccessedAt (core `effectiveAccess`).
 */
export function withCountedAccess<S extends CounterSource>(
  memoryId: string,
  source: S,
  counted: CountedAccess,
): S {
  const counter = counted.get(memoryId);
  if (!counter || counter.tenantId !== source.tenantId || counter.projectId !== source.projectId) {
    return source;
  }
  return { ...source, ...effectiveAccess(countsOf(source), counter) };
}
