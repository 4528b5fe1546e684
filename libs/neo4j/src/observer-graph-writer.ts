import {
  applyStoredPairFacts,
  type GraphNeighbourEvidence,
  type GraphNeighbourEvidenceQuery,
  type PairEdgeDelta,
} from '@engram/core';
import neo4j, { type Driver, type ManagedTransaction } from 'neo4j-driver';
import { classifyGraphWriteError, isOverTransactionMemory } from './graph-writer-driver';
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
  type GraphScope,
  type ObserverGraphBatch,
  type ObserverGraphStore,
} from './observer-graph.types';
import { neighbourEvidence, tenantsOfProject, topCoAccessNeighbours } from './co-access-neighbours';
import {
  coAccessEdgeWork,
  scopeKey,
  sortedGraphRows,
  touchesByFile,
  type SortedGraphRows,
} from './observer-graph-rows';

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
    const rows = sortedGraphRows(batch);
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
  private async writeIn(tx: ManagedTransaction, rows: SortedGraphRows): Promise<number> {
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
    rows: SortedGraphRows,
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
    const edges = coAccessEdgeWork(deltas, rows.newlyTouched, rows.filePaths);
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
