import {
  applyStoredPairFacts,
  DownstreamUnavailableError,
  EngramError,
  errorMessage,
  isProgrammerError,
  type GraphNeighbourEvidence,
  type GraphNeighbourEvidenceQuery,
  type GraphSessionPairRow,
  type PairEdgeDelta,
  PAIR_COUNTERS,
} from '@engram/core';
import neo4j, { type Driver, Neo4jError, type ManagedTransaction } from 'neo4j-driver';
import { classifyNeo4jError, type Neo4jConnection } from './neo4j-client';
import {
  CREATE_CO_ACCESSED,
  LOCK_SESSION_PAIR_FACTS,
  MERGE_FILES,
  MERGE_PROJECTS,
  RECOMPUTE_ERROR_PATTERNS,
  UPDATE_CO_ACCESSED,
  UPSERT_ERROR_HITS,
  UPSERT_SESSIONS,
  UPSERT_TOUCHES,
  WRITE_SESSION_PAIR_FACTS,
} from './observer-graph.cypher';
import {
  isEmptyGraphBatch,
  splitGraphBatch,
  type CoAccessDirectionRule,
  type GraphCoAccessNeighbour,
  type GraphFileRef,
  type GraphScope,
  type ObserverGraphBatch,
  type ObserverGraphStore,
} from './observer-graph.types';
import { neighbourEvidence, tenantsOfProject, topCoAccessNeighbours } from './co-access-neighbours';

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
function isOverTransactionMemory(error: unknown): boolean {
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
  /** `splits`: batches Neo4j refused as too big for one transaction, written in halves. */
  readonly counters = { batches: 0, rows: 0, failures: 0, splits: 0 };

  constructor(
    private readonly driver: Driver,
    private readonly rule: CoAccessDirectionRule,
    private readonly options: GraphWriterOptions = {},
  ) {}

  /**
   * One transaction per batch; a batch over the server's transaction memory limit is written in
   * halves by session (a catch-up fetch can hold tens of thousands of calls of thousands of
   * sessions): retrying it whole would fail the same way forever and stall the consumer.
   */
  async write(batch: ObserverGraphBatch): Promise<void> {
    if (isEmptyGraphBatch(batch)) return;
    try {
      await this.writeWhole(batch);
    } catch (error) {
      const halves = isOverTransactionMemory(error) ? splitGraphBatch(batch) : null;
      if (!halves) throw classifyGraphWriteError(error);
      this.counters.splits += 1;
      for (const half of halves) await this.write(half);
    }
  }

  private async writeWhole(batch: ObserverGraphBatch): Promise<void> {
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
      throw error;
    } finally {
      await session.close().catch(() => undefined);
    }
    this.counters.batches += 1;
    this.counters.rows += written;
  }

  /**
   * The batch's statements in one transaction (run again whole if the driver retries it): nodes
   * first (projects, sessions — locked, their pair facts read —, files), then what relates them,
   * so no statement both MERGEs a node and reads what an earlier row of it wrote.
   */
  private async writeIn(tx: ManagedTransaction, rows: SortedRows): Promise<number> {
    const run = async (query: string, params: { rows: object[] } & Record<string, unknown>) => {
      if (params.rows.length > 0) await tx.run(query, params);
      return params.rows.length;
    };
    const stored = new Map<string, string | null>();
    const read = async (query: string, sessionRows: object[]) => {
      if (sessionRows.length === 0) return;
      const result = await tx.run(query, { rows: sessionRows });
      for (const r of result.records) {
        stored.set(r.get('sessionId') as string, r.get('pairFacts') as string | null);
      }
    };
    await run(MERGE_PROJECTS, { rows: rows.projects });
    await read(UPSERT_SESSIONS, rows.sessions);
    await read(LOCK_SESSION_PAIR_FACTS, rows.otherSessions);
    await run(MERGE_FILES, { rows: rows.files });
    let written = rows.sessions.length;
    if (rows.touches.length > 0) {
      await tx.run(UPSERT_TOUCHES, { files: touchesByFile(rows.touches) });
      written += rows.touches.length;
    }
    await this.writePairFacts(tx, rows, stored);
    written += rows.pairs.length;
    written += await run(UPSERT_ERROR_HITS, { rows: rows.errors });
    written += await run(RECOMPUTE_ERROR_PATTERNS, { rows: rows.patterns });
    return written;
  }

  /**
   * The sessions' pair facts (read under the session's lock by UPSERT_SESSIONS): moved forward
   * by the batch in the core, written back, and the CO_ACCESSED edges moved by exactly the
   * difference — with the weights of the edges of newly touched files — in one pass per file.
   */
  private async writePairFacts(
    tx: ManagedTransaction,
    rows: SortedRows,
    storedBySession: ReadonlyMap<string, string | null>,
  ): Promise<void> {
    let deltas: PairEdgeDelta[] = [];
    if (rows.pairs.length > 0) {
      const applied = applyStoredPairFacts(storedBySession, rows.pairs);
      deltas = applied.deltas;
      const factRows = [...applied.facts].map(([sessionId, pairFacts]) => ({
        sessionId,
        pairFacts,
      }));
      if (factRows.length > 0) await tx.run(WRITE_SESSION_PAIR_FACTS, { rows: factRows });
    }
    const edges = edgeWork(deltas, rows.newlyTouched, rows.filePaths);
    if (edges.newFiles.length > 0) await tx.run(MERGE_FILES, { rows: edges.newFiles });
    if (edges.projects.length === 0) return;
    const result = await tx.run(UPDATE_CO_ACCESSED, {
      projects: edges.projects,
      ...this.directionRule(),
    });
    const created = result.records.map((r) => {
      const tenantId = r.get('tenantId') as string;
      const projectId = r.get('projectId') as string;
      const fileA = r.get('fileA') as string;
      const byFileB = edges.deltas.get(scopeKey(tenantId, projectId, fileA))!;
      const edgeRows = (r.get('missing') as string[]).map((fileB) => ({
        fileB,
        d: byFileB[fileB],
      }));
      return { tenantId, projectId, fileA, edges: edgeRows };
    });
    if (created.length > 0) {
      await tx.run(CREATE_CO_ACCESSED, { rows: created, ...this.directionRule() });
    }
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
    const pairs = [...batch.sessionPairs].sort(
      (a, b) =>
        compare(a.sessionId, b.sessionId) ||
        byScope(a, b) ||
        compare(a.fileA, b.fileA) ||
        compare(a.fileB, b.fileB),
    );
    const pairSessions = new Set(pairs.map((p) => p.sessionId));
    const sessions = [...batch.sessions]
      .sort((a, b) => compare(a.sessionId, b.sessionId))
      .map((s) => ({ ...s, withFacts: pairSessions.has(s.sessionId) }));
    const listed = new Set(sessions.map((s) => s.sessionId));
    const otherSessions = uniqueBy(
      [...batch.touches, ...pairs, ...batch.errors]
        .filter((r) => !listed.has(r.sessionId))
        .map(({ sessionId, tenantId, projectId }) => ({ sessionId, tenantId, projectId }))
        .sort((a, b) => compare(a.sessionId, b.sessionId)),
      (s) => [s.sessionId],
    );
    const touches = [...batch.touches].sort(
      (a, b) => byScope(a, b) || compare(a.path, b.path) || compare(a.sessionId, b.sessionId),
    );
    const files = uniqueBy(touches, (t) => [t.tenantId, t.projectId, t.path]).map(
      ({ tenantId, projectId, path, module }) => ({ tenantId, projectId, path, module }),
    );
    return {
      projects: uniqueBy(
        sessions.map(({ tenantId, projectId }) => ({ tenantId, projectId })).sort(byScope),
        (p) => [p.tenantId, p.projectId],
      ),
      sessions,
      otherSessions,
      files,
      filePaths: new Set(files.map((f) => scopeKey(f.tenantId, f.projectId, f.path))),
      touches,
      pairs,
      newlyTouched: batch.newlyTouchedFiles,
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

  neighbourEvidence(query: GraphNeighbourEvidenceQuery): Promise<GraphNeighbourEvidence> {
    return neighbourEvidence(this.driver, query);
  }

  tenantsOfProject(projectId: string): Promise<string[]> {
    return tenantsOfProject(this.driver, projectId);
  }
}

interface SortedRows {
  projects: { tenantId: string; projectId: string }[];
  sessions: (ObserverGraphBatch['sessions'][number] & { withFacts: boolean })[];
  /** Sessions rows name without a session row of their own (bare MERGE, as before). */
  otherSessions: { sessionId: string; tenantId: string; projectId: string }[];
  /** The touched files, each once (with their module). */
  files: { tenantId: string; projectId: string; path: string; module: string }[];
  filePaths: ReadonlySet<string>;
  touches: ObserverGraphBatch['touches'];
  pairs: GraphSessionPairRow[];
  newlyTouched: readonly GraphFileRef[];
  errors: ObserverGraphBatch['errors'];
  patterns: { tenantId: string; projectId: string; hash: string }[];
}

/** One file's row of UPDATE_CO_ACCESSED (see there). */
interface EdgeFileRow {
  path: string;
  touched: boolean;
  pathsB: string[];
  deltas: Record<string, number[]>;
}

/**
 * The parameters of UPDATE_CO_ACCESSED: per project, the files that are fileA of a delta or
 * newly touched, sorted, with their deltas by fileB; and the files pairs name that no touch
 * created (MERGE_FILES, without a module, as a pair alone always created them).
 */
function edgeWork(
  deltas: readonly PairEdgeDelta[],
  newlyTouched: readonly GraphFileRef[],
  filePaths: ReadonlySet<string>,
) {
  const projects = new Map<
    string,
    {
      tenantId: string;
      projectId: string;
      files: Map<string, EdgeFileRow>;
      state: Record<string, number>;
    }
  >();
  const fileRow = (tenantId: string, projectId: string, path: string) => {
    const key = scopeKey(tenantId, projectId, '');
    let project = projects.get(key);
    if (!project) {
      project = { tenantId, projectId, files: new Map(), state: {} };
      projects.set(key, project);
    }
    let row = project.files.get(path);
    if (!row) {
      row = { path, touched: false, pathsB: [], deltas: {} };
      project.files.set(path, row);
      project.state[path] = 1;
    }
    return { project, row };
  };
  const byFile = new Map<string, Record<string, number[]>>();
  const newFiles = new Map<string, { tenantId: string; projectId: string; path: string }>();
  for (const delta of deltas) {
    const { tenantId, projectId, fileA, fileB } = delta;
    const { row } = fileRow(tenantId, projectId, fileA);
    row.pathsB.push(fileB);
    row.deltas[fileB] = [
      delta.newSessions,
      ...PAIR_COUNTERS.map((c) => delta.counters[c]),
      delta.lastObservedAt,
    ];
    byFile.set(scopeKey(tenantId, projectId, fileA), row.deltas);
    for (const path of [fileA, fileB]) {
      const key = scopeKey(tenantId, projectId, path);
      if (!filePaths.has(key)) newFiles.set(key, { tenantId, projectId, path });
    }
  }
  for (const { tenantId, projectId, path } of newlyTouched) {
    const { project, row } = fileRow(tenantId, projectId, path);
    row.touched = true;
    project.state[path] = 2;
  }
  const sortedProjects = [...projects.values()]
    .sort((a, b) => compare(a.tenantId, b.tenantId) || compare(a.projectId, b.projectId))
    .map(({ tenantId, projectId, files, state }) => ({
      tenantId,
      projectId,
      state,
      files: [...files.values()].sort((a, b) => compare(a.path, b.path)),
    }));
  return {
    projects: sortedProjects,
    deltas: byFile,
    newFiles: [...newFiles.values()]
      .sort(
        (a, b) =>
          compare(a.tenantId, b.tenantId) ||
          compare(a.projectId, b.projectId) ||
          compare(a.path, b.path),
      )
      .map((f) => ({ ...f, module: null })),
  };
}

/** Touches (sorted by file, then session) grouped by file, for UPSERT_TOUCHES. */
function touchesByFile(touches: readonly ObserverGraphBatch['touches'][number][]) {
  const files: { tenantId: string; projectId: string; path: string; touches: object[] }[] = [];
  let last: (typeof files)[number] | undefined;
  for (const {
    tenantId,
    projectId,
    path,
    sessionId,
    reads,
    edits,
    accesses,
    firstAt,
    lastAt,
  } of touches) {
    if (!last || last.tenantId !== tenantId || last.projectId !== projectId || last.path !== path) {
      last = { tenantId, projectId, path, touches: [] };
      files.push(last);
    }
    last.touches.push({ sessionId, reads, edits, accesses, firstAt, lastAt });
  }
  return files;
}

function scopeKey(tenantId: string, projectId: string, path: string): string {
  return `${tenantId}\u0000${projectId}\u0000${path}`;
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
