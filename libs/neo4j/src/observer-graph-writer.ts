import {
  applyPairFacts,
  decodePairFacts,
  DownstreamUnavailableError,
  encodePairFacts,
  EngramError,
  errorMessage,
  isProgrammerError,
  type GraphSessionPairRow,
  type StoredPairFacts,
} from '@engram/core';
import neo4j, { type Driver, Neo4jError, type ManagedTransaction } from 'neo4j-driver';
import { classifyNeo4jError, type Neo4jConnection } from './neo4j-client';
import {
  ADD_CO_ACCESS_DELTAS,
  LOCK_SESSION_PAIR_FACTS,
  RECOMPUTE_CO_ACCESSED,
  RECOMPUTE_ERROR_PATTERNS,
  REFRESH_FILE_WEIGHTS,
  UPSERT_ERROR_HITS,
  UPSERT_SESSIONS,
  UPSERT_TOUCHES,
  WRITE_SESSION_PAIR_FACTS,
} from './observer-graph.cypher';
import {
  isEmptyGraphBatch,
  type CoAccessDirectionRule,
  type GraphCoAccessNeighbour,
  type GraphFileRef,
  type GraphScope,
  type ObserverGraphBatch,
  type ObserverGraphStore,
} from './observer-graph.types';
import { tenantsOfProject, topCoAccessNeighbours } from './co-access-neighbours';

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

function isSocketError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return error instanceof Error && typeof code === 'string' && /^E[A-Z]+$/.test(code);
}

export interface GraphWriterOptions {
  database?: string;
  /** Server-side limit of one batch's transaction (lock waits included). */
  transactionTimeoutMs?: number;
}

/**
 * Writes the observer's batches to Neo4j: one managed transaction per batch, one `UNWIND … MERGE`
 * statement per kind of row (see observer-graph.cypher.ts for why replays change nothing). Rows
 * are sorted so concurrent writers take their locks in the same order.
 */
export class Neo4jObserverGraphWriter implements ObserverGraphStore {
  readonly counters = { batches: 0, rows: 0, failures: 0 };

  constructor(
    private readonly driver: Driver,
    private readonly rule: CoAccessDirectionRule,
    private readonly options: GraphWriterOptions = {},
  ) {}

  async write(batch: ObserverGraphBatch): Promise<void> {
    if (isEmptyGraphBatch(batch)) return;
    const rows = this.sortedRows(batch);
    const session = this.driver.session({
      defaultAccessMode: neo4j.session.WRITE,
      ...(this.options.database ? { database: this.options.database } : {}),
    });
    let written: number;
    try {
      written = await session.executeWrite((tx: ManagedTransaction) => this.writeIn(tx, rows), {
        timeout: this.options.transactionTimeoutMs ?? 30_000,
      });
    } catch (error) {
      this.counters.failures += 1;
      throw classifyGraphWriteError(error);
    } finally {
      await session.close().catch(() => undefined);
    }
    this.counters.batches += 1;
    this.counters.rows += written;
  }

  /** The batch's statements in one transaction (run again whole if the driver retries it). */
  private async writeIn(tx: ManagedTransaction, rows: SortedRows): Promise<number> {
    const run = async (query: string, params: { rows: object[] } & Record<string, unknown>) => {
      if (params.rows.length > 0) await tx.run(query, params);
      return params.rows.length;
    };
    let written = await run(UPSERT_SESSIONS, { rows: rows.sessions });
    written += await run(UPSERT_TOUCHES, { rows: rows.touches });
    const edges = await this.addPairFacts(tx, rows.pairs);
    written += rows.pairs.length;
    written += await run(RECOMPUTE_CO_ACCESSED, { rows: edges, ...this.directionRule() });
    written += await run(REFRESH_FILE_WEIGHTS, { rows: rows.files });
    written += await run(UPSERT_ERROR_HITS, { rows: rows.errors });
    written += await run(RECOMPUTE_ERROR_PATTERNS, { rows: rows.patterns });
    return written;
  }

  /**
   * The sessions' pair facts: read (locked), moved forward by the batch in the core, the edges
   * moved by exactly the difference, the facts written back. Returns the edges that moved.
   */
  private async addPairFacts(
    tx: ManagedTransaction,
    pairs: readonly GraphSessionPairRow[],
  ): Promise<{ tenantId: string; projectId: string; fileA: string; fileB: string }[]> {
    if (pairs.length === 0) return [];
    const sessions = uniqueBy(pairs, (p) => [p.sessionId]).map(
      ({ sessionId, tenantId, projectId }) => ({ sessionId, tenantId, projectId }),
    );
    const result = await tx.run(LOCK_SESSION_PAIR_FACTS, { rows: sessions });
    const stored = new Map<string, StoredPairFacts>(
      result.records.map((r) => [
        r.get('sessionId') as string,
        decodePairFacts(r.get('pairFacts') as string | null),
      ]),
    );
    const { facts, deltas } = applyPairFacts(stored, pairs);
    const deltaRows = deltas.map(({ counters, ...delta }) => ({ ...delta, ...counters }));
    if (deltaRows.length > 0) await tx.run(ADD_CO_ACCESS_DELTAS, { rows: deltaRows });
    const factRows = [...facts].map(([sessionId, f]) => ({
      sessionId,
      pairFacts: encodePairFacts(f),
    }));
    await tx.run(WRITE_SESSION_PAIR_FACTS, { rows: factRows });
    return deltas.map(({ tenantId, projectId, fileA, fileB }) => ({
      tenantId,
      projectId,
      fileA,
      fileB,
    }));
  }

  private directionRule() {
    return {
      directionalShare: this.rule.directionalShare,
      directionalMinSamples: this.rule.directionalMinSamples,
    };
  }

  /** Every kind of row in lock order, so concurrent writers take their locks in the same order. */
  private sortedRows(batch: ObserverGraphBatch): SortedRows {
    const byScope = (a: { tenantId: string; projectId: string }, b: typeof a) =>
      compare(a.tenantId, b.tenantId) || compare(a.projectId, b.projectId);
    const errors = [...batch.errors].sort(
      (a, b) => byScope(a, b) || compare(a.hash, b.hash) || compare(a.sessionId, b.sessionId),
    );
    return {
      sessions: [...batch.sessions].sort((a, b) => compare(a.sessionId, b.sessionId)),
      touches: [...batch.touches].sort(
        (a, b) => byScope(a, b) || compare(a.path, b.path) || compare(a.sessionId, b.sessionId),
      ),
      pairs: [...batch.sessionPairs].sort(
        (a, b) =>
          compare(a.sessionId, b.sessionId) ||
          byScope(a, b) ||
          compare(a.fileA, b.fileA) ||
          compare(a.fileB, b.fileB),
      ),
      files: uniqueBy(
        [...batch.newlyTouchedFiles].sort((a, b) => byScope(a, b) || compare(a.path, b.path)),
        (f) => [f.tenantId, f.projectId, f.path],
      ),
      errors,
      patterns: uniqueBy(errors, (e) => [e.tenantId, e.projectId, e.hash]).map(
        ({ tenantId, projectId, hash }) => ({ tenantId, projectId, hash }),
      ),
    };
  }

  topCoAccessNeighbours(
    query: GraphScope & { path: string; k: number },
  ): Promise<GraphCoAccessNeighbour[]> {
    return topCoAccessNeighbours(this.driver, query);
  }

  tenantsOfProject(projectId: string): Promise<string[]> {
    return tenantsOfProject(this.driver, projectId);
  }
}

interface SortedRows {
  sessions: ObserverGraphBatch['sessions'];
  touches: ObserverGraphBatch['touches'];
  pairs: GraphSessionPairRow[];
  files: GraphFileRef[];
  errors: ObserverGraphBatch['errors'];
  patterns: { tenantId: string; projectId: string; hash: string }[];
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The first of each key, order kept (the input is sorted by key). */
function uniqueBy<T>(items: readonly T[], key: (item: T) => string[]): T[] {
  const seen = new Set<string>();
  return items.filter((item) => {
    const k = JSON.stringify(key(item));
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
