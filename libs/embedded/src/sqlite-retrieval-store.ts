import { join } from 'node:path';
import {
  MisconfigurationError,
  type AccessUpdate,
  type RecallScope,
  type SessionActivity,
  type StoreCandidateQuery,
  type StoreCandidates,
  type StoreListQuery,
} from '@engram/core';
import BetterSqlite3, { type Database, type Statement } from 'better-sqlite3';
import { preparePrivateDatabase } from './private-files';
import { LexicalIndexes, type LexicalIndexOptions } from './lexical-index';
import { SqliteCandidateSearch } from './sqlite-candidate-search';
import { classifyStorageError } from './sqlite-event-log';
import { writeAccessCounts } from './sqlite-retrieval-access';
import {
  documentRow,
  ftsTable,
  keptAccess,
  SCHEMA,
  tierOf,
  type RetrievalStoreTier,
} from './sqlite-retrieval-documents';
import {
  episodesOfTurns,
  listDocuments,
  recentSessions,
  tenantsWithProject,
} from './sqlite-retrieval-lookups';
import { StatementCache } from './sqlite-statement-cache';
import { VectorIndexes, type VectorIndexOptions } from './vector-index';

// The three retrieval tiers of SPEC §7 on SQLite (embedded mode): FTS5 for BM25 (answered from
// in-memory postings with FTS5's own scores once they pay: lexical-index.ts) and kNN by
// VectorIndexes (exact scan, or an HNSW graph for large scopes: vector-index.ts), behind the
// same RecallStore port as the Elasticsearch indices. Documents
// are the ones the indexer builds for Elasticsearch (same builders, same ids), stored as JSON;
// their vector goes beside them as a Float32 blob with its model id and dimension.
// The candidate searches: sqlite-candidate-search.ts; the documents' tables and rows:
// sqlite-retrieval-documents.ts; the filters' SQL: sqlite-retrieval-filter.ts; the BM25 query
// text: sqlite-retrieval-query-text.ts.

/** A write by explicit id, the tier as its `index` (the indexer's go through sqliteStoreWriter). */
export type RetrievalStoreOperation =
  | { action: 'index'; index: string; id: string; document: object }
  | { action: 'delete'; index: string; id: string };

export type RetrievalWriteResult = 'created' | 'updated' | 'deleted' | 'not_found';

export interface SqliteRetrievalStoreOptions {
  dataDir: string;
  /** Default `retrieval.db`. */
  fileName?: string;
  /** When kNN uses the ANN graph instead of the exact scan (vector-index.ts). */
  vectorIndex?: VectorIndexOptions;
  /** When BM25 is answered from in-memory postings instead of FTS5 (lexical-index.ts). */
  lexicalIndex?: LexicalIndexOptions;
}

/** The memory map of the database file (see the constructor). */
const MMAP_BYTES = 1024 ** 3;

/**
 * The retrieval store of embedded mode: one SQLite file (`retrieval.db` in the data directory),
 * written by the embedded indexer, read by RecallService through the RecallStore port.
 *
 * kNN goes through VectorIndexes: the vectors of the queried tier, scope and model, held as an
 * exact matrix (small scopes) or an HNSW graph (large ones), kept current through a change log
 * every vector write appends to in its transaction (so other processes' writes are seen too).
 */
export class SqliteRetrievalStore {
  readonly path: string;
  private readonly db: Database;
  private readonly vectors: VectorIndexes;
  private readonly lexicalIndexes: LexicalIndexes;
  private readonly statements: StatementCache;
  private readonly search: SqliteCandidateSearch;

  private constructor(options: SqliteRetrievalStoreOptions) {
    this.path = join(options.dataDir, options.fileName ?? 'retrieval.db');
    // Private to the user (dir 0700, database and journals 0600): it holds prompts and code.
    preparePrivateDatabase(options.dataDir, this.path);
    this.db = new BetterSqlite3(this.path, { timeout: 10_000 });
    const mode = this.db.pragma('journal_mode = WAL', { simple: true }) as string;
    if (mode !== 'wal') {
      this.db.close();
      throw new MisconfigurationError(
        `${this.path}: SQLite refused WAL mode (journal_mode=${mode}); put --data-dir on a local disk`,
      );
    }
    // Reads through a memory map rather than a read() per page: a BM25 query on FTS5 looks up
    // the row of each match (documents with their vectors: ~2 KB each, scattered), which at 100k
    // memories halved its time. Address space only; the OS page cache holds the pages either way.
    this.db.pragma(`mmap_size = ${MMAP_BYTES}`);
    this.db.exec(SCHEMA);
    this.vectors = new VectorIndexes(this.db, options.dataDir, options.vectorIndex);
    this.lexicalIndexes = new LexicalIndexes(this.db, (tier) => ftsTable(tierOf(tier)), {
      ...options.lexicalIndex,
    });
    this.statements = new StatementCache(this.db);
    this.search = new SqliteCandidateSearch(this.statements, this.vectors, this.lexicalIndexes);
  }

  static open(options: SqliteRetrievalStoreOptions): SqliteRetrievalStore {
    return new SqliteRetrievalStore(options);
  }

  close(): void {
    if (!this.db.open) return;
    this.vectors.close();
    this.lexicalIndexes.close();
    this.statements.clear();
    this.db.close();
  }

  /**
   * Builds (or brings up to date) a tier's in-memory BM25 postings now rather than when its
   * FTS5 queries have paid for them (benchmarks; a server that wants its first recalls fast).
   */
  warmLexical(tier: string): void {
    this.lexicalIndexes.warm(tierOf(tier));
  }

  /** Whether BM25 on the tier is answered from in-memory postings (else FTS5). */
  lexicalInMemory(tier: string): boolean {
    return this.lexicalIndexes.holds(tierOf(tier));
  }

  /** Builds or replays a scope's kNN graph now rather than at its first recall (reindex). */
  warmVectors(tier: string, scope: RecallScope, model: string, dims: number): 'exact' | 'ann' {
    return this.vectors.warm(tierOf(tier), scope, model, dims);
  }

  /** The kNN state held per tier, scope and model: exact or ANN, vectors, file size. */
  describeVectors() {
    return this.vectors.describe();
  }

  /** Documents per tier (logs and tests). */
  counts(): Record<RetrievalStoreTier, number> {
    const rows = this.db
      .prepare('SELECT tier, count(*) AS n FROM retrieval_documents GROUP BY tier')
      .all() as { tier: RetrievalStoreTier; n: number }[];
    const counts = { memories: 0, episodes: 0, turns: 0 };
    for (const row of rows) counts[row.tier] = row.n;
    return counts;
  }

  /**
   * Applies the operations in order, in one transaction: all or none. `index` replaces the
   * document of its id (an idempotent upsert), `delete` removes it (`not_found` if it was gone).
   * Throws classified errors (a busy or full disk is retriable).
   */
  write(operations: readonly RetrievalStoreOperation[]): RetrievalWriteResult[] {
    try {
      return this.db.transaction(() => operations.map((op) => this.apply(op)))();
    } catch (error) {
      throw classifyStorageError(error);
    }
  }

  private apply(op: RetrievalStoreOperation): RetrievalWriteResult {
    const tier = tierOf(op.index);
    const existing = this.statement(
      `SELECT rid, tenant_id, project_id, json_extract(doc, '$.accessCount') AS access_count,
         json_extract(doc, '$.lastAccessedAt') AS last_accessed_at
         FROM retrieval_documents WHERE tier = ? AND id = ?`,
    ).get(tier, op.id) as
      | {
          rid: number;
          tenant_id: string;
          project_id: string;
          access_count: number | null;
          last_accessed_at: number | null;
        }
      | undefined;
    if (existing) {
      this.vectors.changed(tier, existing.tenant_id, existing.project_id, existing.rid);
      this.statement(`DELETE FROM ${ftsTable(tier)} WHERE rowid = ?`).run(existing.rid);
    }
    if (op.action === 'delete') {
      if (!existing) return 'not_found';
      this.statement('DELETE FROM retrieval_documents WHERE rid = ?').run(existing.rid);
      return 'deleted';
    }
    const row = documentRow(
      tier,
      op.id,
      existing && tier === 'memories' ? keptAccess(op.document, existing) : op.document,
    );
    const rid = existing
      ? (this.statement(
          `UPDATE retrieval_documents SET tenant_id = @tenantId, project_id = @projectId,
             session_id = @sessionId, activity_at = @activityAt, doc = @doc,
             embedding = @embedding, embedding_model = @embeddingModel,
             embedding_dims = @embeddingDims WHERE rid = @rid`,
        ).run({ ...row, rid: existing.rid }),
        existing.rid)
      : Number(
          this.statement(
            `INSERT INTO retrieval_documents (tier, id, tenant_id, project_id, session_id,
               activity_at, doc, embedding, embedding_model, embedding_dims)
               VALUES (@tier, @id, @tenantId, @projectId, @sessionId, @activityAt, @doc,
               @embedding, @embeddingModel, @embeddingDims)`,
          ).run(row).lastInsertRowid,
        );
    this.statement(`INSERT INTO ${ftsTable(tier)} (rowid, text) VALUES (?, ?)`).run(rid, row.text);
    this.vectors.changed(tier, row.tenantId, row.projectId, rid);
    return existing ? 'updated' : 'created';
  }

  /** A prepared statement per SQL text, kept (`StatementCache`). */
  private statement(sql: string): Statement {
    return this.statements.get(sql);
  }

  /** BM25 and kNN candidates of one tier, filtered (SPEC §7); the core decides the order. */
  async candidates<S>(tier: string, query: StoreCandidateQuery): Promise<StoreCandidates<S>> {
    return this.search.candidates<S>(tier, query);
  }

  /**
   * The episodes each turn (by eventId) belongs to, from the episodes' `sourceEventIds`, in
   * episode start order — what the Elasticsearch store answers.
   */
  async episodesOfTurns(scope: RecallScope, eventIds: string[]): Promise<Map<string, string[]>> {
    return Promise.resolve(episodesOfTurns(this.db, scope, eventIds));
  }

  /** The `n` most recently active sessions of a project (user turns and episodes). */
  async recentSessions(scope: RecallScope, n: number): Promise<SessionActivity[]> {
    return Promise.resolve(recentSessions(this.db, scope, n));
  }

  /**
   * accessCount + n and lastAccessedAt = max, with the core's rule, in one transaction. A memory
   * that is gone, or of another scope, is skipped; SQLite serialises writers, so nothing is lost
   * to a concurrent write and nothing comes back to retry.
   */
  async writeAccess(updates: AccessUpdate[]): Promise<{ failed: AccessUpdate[] }> {
    writeAccessCounts(this.db, updates);
    return Promise.resolve({ failed: [] });
  }

  /** The tenants that have documents of a project (a CLI without --tenant takes the only one). */
  async tenantsWithProject(projectId: string): Promise<string[]> {
    return Promise.resolve(tenantsWithProject(this.db, projectId));
  }

  /**
   * The documents of a tier matching the scope and filter (`compileFilter`), newest
   * `timestamp` first (ties: eventId, then id — Elasticsearch's listing order), at most `size`.
   */
  async list<S>(tier: string, query: StoreListQuery): Promise<{ id: string; source: S }[]> {
    return Promise.resolve(listDocuments<S>(this.db, tierOf(tier), query));
  }
}
