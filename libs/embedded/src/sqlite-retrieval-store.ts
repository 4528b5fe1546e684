import { join } from 'node:path';
import {
  applyAccessUpdate,
  MisconfigurationError,
  significantQueryTerms,
  type AccessUpdate,
  type ModelVector,
  type RecallScope,
  type SessionActivity,
  type StoreCandidateQuery,
  type StoreCandidates,
  type StoreFilter,
  type StoreListQuery,
} from '@engram/core';
import BetterSqlite3, { type Database, type Statement } from 'better-sqlite3';
import { preparePrivateDatabase } from './private-files';
import {
  FTS_TOKENIZER,
  LexicalIndexes,
  lexicalScope,
  type LexicalHit,
  type LexicalIndexOptions,
} from './lexical-index';
import { classifyStorageError } from './sqlite-event-log';
import { VectorIndexes, type VectorIndexOptions, type VectorNeighbour } from './vector-index';
import { blobVector } from './vector-index-exact';

// The three retrieval tiers of SPEC §7 on SQLite (embedded mode): FTS5 for BM25 (answered from
// in-memory postings with FTS5's own scores once they pay: lexical-index.ts) and kNN by
// VectorIndexes (exact scan, or an HNSW graph for large scopes: vector-index.ts), behind the
// same RecallStore port as the Elasticsearch indices. Documents
// are the ones the indexer builds for Elasticsearch (same builders, same ids), stored as JSON;
// their vector goes beside them as a Float32 blob with its model id and dimension.

export const RETRIEVAL_STORE_TIERS = ['memories', 'episodes', 'turns'] as const;
export type RetrievalStoreTier = (typeof RETRIEVAL_STORE_TIERS)[number];

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

/** The fields of a retrieval document the store reads (SearchFields plus the envelope). */
interface StoredFields {
  text?: unknown;
  tenantId?: unknown;
  projectId?: unknown;
  sessionId?: unknown;
  timestamp?: unknown;
  embedding?: unknown;
  embeddingModel?: unknown;
  embeddingDims?: unknown;
  accessCount?: unknown;
  lastAccessedAt?: unknown;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS retrieval_documents (
  rid INTEGER PRIMARY KEY, tier TEXT NOT NULL, id TEXT NOT NULL,
  tenant_id TEXT NOT NULL, project_id TEXT NOT NULL, session_id TEXT, activity_at INTEGER,
  doc TEXT NOT NULL, embedding BLOB, embedding_model TEXT, embedding_dims INTEGER,
  UNIQUE (tier, id)
);
CREATE INDEX IF NOT EXISTS retrieval_documents_vectors
  ON retrieval_documents (tier, tenant_id, project_id, embedding_model, embedding_dims);
CREATE INDEX IF NOT EXISTS retrieval_documents_sessions
  ON retrieval_documents (tenant_id, project_id, session_id, activity_at);
${RETRIEVAL_STORE_TIERS.map(
  // Contentless: the text is in the document already; contentless_delete lets upserts replace it.
  (tier) => `CREATE VIRTUAL TABLE IF NOT EXISTS ${ftsTable(tier)} USING fts5(
  text, tokenize = '${FTS_TOKENIZER}', content = '', contentless_delete = 1);`,
).join('\n')}
`;

function ftsTable(tier: RetrievalStoreTier): string {
  return `retrieval_text_${tier}`;
}

// ---- BM25 query text ----

/**
 * Lucene's English stop words, which Elasticsearch's `english` analyzer drops: FTS5 (porter
 * stemming, no stop list) would otherwise match "how do we … the …" against every document.
 */
const ENGLISH_STOP_WORDS = new Set(
  (
    'a an and are as at be but by for if in into is it no not of on or such that the their then ' +
    'there these they this to was will with'
  ).split(' '),
);

/** The words of a free-text query, lower case, each once, in order, without stop words. */
export function queryWords(text: string): string[] {
  return [
    ...new Set(
      (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => !ENGLISH_STOP_WORDS.has(w)),
    ),
  ];
}

/**
 * The FTS5 query for words: OR-ed like Elasticsearch's `match`, each quoted so that no word is
 * read as FTS5 syntax (NEAR, AND, column filters, `*`). Null when there is no word (nothing can
 * match lexically).
 */
function ftsMatch(words: readonly string[]): string | null {
  return words.length === 0 ? null : words.map((word) => `"${word}"`).join(' OR ');
}

/** The FTS5 query for a free-text query (`queryWords`, OR-ed); null when no word is left. */
export function ftsQuery(text: string): string | null {
  return ftsMatch(queryWords(text));
}

// ---- filters ----

type SqlValue = string | number | null;

export interface CompiledFilter {
  /** A boolean SQL expression over the row alias `d`. */
  sql: string;
  params: SqlValue[];
  /** The scope every query carries (SPEC §11). */
  scope: RecallScope;
  /** True when the filter says nothing beyond tenant and project. */
  scopeOnly: boolean;
}

/** A filter the embedded store does not translate: a bug to fix, never a silent "any". */
export class UnsupportedFilterError extends MisconfigurationError {}

interface Sql {
  sql: string;
  params: SqlValue[];
}

const FIELD = /^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*$/;

/**
 * The JSON path of a document field (the port's field names, nested ones dotted:
 * `workUnitRef.hierarchy`; checked all the same).
 */
function jsonPath(field: string): string {
  if (!FIELD.test(field)) throw new UnsupportedFilterError(`filter field "${field}" is not a name`);
  return `$.${field}`;
}

const placeholders = (n: number) => Array.from({ length: n }, () => '?').join(', ');

/**
 * `term`/`terms` as the port means them: any value of the field (scalar or array) is one of the
 * given ones. An empty list matches nothing.
 */
function termsSql(field: string, values: readonly string[]): Sql {
  if (values.length === 0) return { sql: '0', params: [] };
  return {
    sql: `EXISTS (SELECT 1 FROM json_each(d.doc, ?) WHERE value IN (${placeholders(values.length)}))`,
    params: [jsonPath(field), ...values],
  };
}

/** Numeric ranges (epoch millis, confidence) on any value of the field, bounds inclusive. */
function rangeSql(field: string, gte: number | undefined, lte: number | undefined): Sql {
  const tests: string[] = [];
  const params: SqlValue[] = [jsonPath(field)];
  for (const [operator, bound] of [
    ['>=', gte],
    ['<=', lte],
  ] as const) {
    if (bound === undefined) continue;
    if (typeof bound !== 'number') {
      throw new UnsupportedFilterError(`range ${operator} ${JSON.stringify(bound)} on ${field}`);
    }
    tests.push(` AND value ${operator} ?`);
    params.push(bound);
  }
  return {
    sql: `EXISTS (SELECT 1 FROM json_each(d.doc, ?) WHERE type IN ('integer', 'real')${tests.join('')})`,
    params,
  };
}

/** A field without a value: missing, null or an empty array. */
function missingSql(field: string): Sql {
  return {
    sql: `NOT EXISTS (SELECT 1 FROM json_each(d.doc, ?) WHERE type <> 'null')`,
    params: [jsonPath(field)],
  };
}

function joined(parts: readonly Sql[], operator: 'AND' | 'OR', empty: '1' | '0'): Sql {
  if (parts.length === 0) return { sql: empty, params: [] };
  return {
    sql: parts.map((p) => `(${p.sql})`).join(` ${operator} `),
    params: parts.flatMap((p) => p.params),
  };
}

function filterSql(filter: StoreFilter): Sql {
  switch (filter.kind) {
    case 'term':
      return termsSql(filter.field, [filter.value]);
    case 'terms':
      return termsSql(filter.field, filter.values);
    case 'range':
      return rangeSql(filter.field, filter.gte, filter.lte);
    case 'missing':
      return missingSql(filter.field);
    case 'all':
      return joined(filter.filters.map(filterSql), 'AND', '1');
    case 'any':
      return joined(filter.filters.map(filterSql), 'OR', '0');
    default:
      throw new UnsupportedFilterError(
        `filter ${JSON.stringify(filter)} is not supported embedded`,
      );
  }
}

/**
 * A store query's scope and filters (the port's StoreFilter) as one parameterised SQL condition
 * over the stored documents: the same semantics over the same fields as Elasticsearch's query
 * DSL, so both stores pass one contract suite. The scope is required.
 */
export function compileFilter(scope: RecallScope, filters: readonly StoreFilter[]): CompiledFilter {
  if (!scope.tenantId || !scope.projectId) {
    throw new UnsupportedFilterError('a retrieval query must filter on tenantId and projectId');
  }
  const compiled = joined(
    [
      { sql: 'd.tenant_id = ?', params: [scope.tenantId] },
      { sql: 'd.project_id = ?', params: [scope.projectId] },
      ...filters.map(filterSql),
    ],
    'AND',
    '1',
  );
  return {
    ...compiled,
    scope: { tenantId: scope.tenantId, projectId: scope.projectId },
    scopeOnly: filters.length === 0,
  };
}

// ---- vectors ----

function vectorBlob(vector: readonly number[]): Buffer {
  const floats = Float32Array.from(vector);
  return Buffer.from(floats.buffer, floats.byteOffset, floats.byteLength);
}

// ---- the store ----

interface DocumentRow {
  rid: number;
  id: string;
  doc: string;
  embedding: Buffer | null;
  embedding_model: string | null;
}

const SOURCES_OF = `
SELECT rid, id, doc, embedding, embedding_model FROM retrieval_documents
WHERE rid IN (SELECT value FROM json_each(?))`;

/** kNN hits: their cosine came with them, so their vectors are not read (nor allocated). */
const SOURCES_WITHOUT_VECTORS_OF = `
SELECT rid, id, doc, NULL AS embedding, NULL AS embedding_model FROM retrieval_documents
WHERE rid IN (SELECT value FROM json_each(?))`;

/** The memory map of the database file (see the constructor). */
const MMAP_BYTES = 1024 ** 3;

/** Prepared statements kept per store; past it the cache starts again. */
const MAX_STATEMENTS = 200;

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
  private readonly statements = new Map<string, Statement>();

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

  /** BM25 and kNN candidates of one tier, filtered (SPEC §7); the core decides the order. */
  async candidates<S>(tier: string, query: StoreCandidateQuery): Promise<StoreCandidates<S>> {
    const t = tierOf(tier);
    const filter = compileFilter(query.scope, query.filter);
    const bm25 = this.lexical(t, query, filter);
    const vector = query.vector && query.vector.dimension > 0 ? query.vector : null;
    const knn = vector ? this.nearest(t, vector, filter, query) : null;
    // kNN hits carry their cosine (`similarity`): the core needs only the BM25-only vectors.
    const knnRids = knn?.map((hit) => hit.rid) ?? [];
    const known = new Set(knnRids);
    const lexicalOnly = bm25.flatMap((hit) => (known.has(hit.rid) ? [] : [hit.rid]));
    const sources = new Map<string, S>();
    const read = (sql: string, rids: number[]) => {
      if (rids.length === 0) return;
      for (const row of this.statement(sql).all(JSON.stringify(rids)) as DocumentRow[]) {
        sources.set(row.id, sourceOf(row) as S);
      }
    };
    read(SOURCES_OF, lexicalOnly);
    read(SOURCES_WITHOUT_VECTORS_OF, knnRids);
    return Promise.resolve({
      bm25: bm25.map(({ id, score }) => ({ id, score })),
      knn: knn && knn.map(({ id, score, cosine }) => ({ id, score, similarity: cosine })),
      sources,
    });
  }

  /**
   * BM25: the query's significant words (`significantQueryTerms`: not in half the tier or more,
   * at most 32), OR-ed, scored by FTS5 — from the in-memory postings when the tier has them, the
   * same scores and order without FTS5's cost per match.
   */
  private lexical(
    tier: RetrievalStoreTier,
    query: StoreCandidateQuery,
    filter: CompiledFilter,
  ): LexicalHit[] {
    const words = query.text === null ? [] : queryWords(query.text);
    if (words.length === 0 || query.size <= 0) return [];
    const postings = this.lexicalIndexes.postings(tier);
    const tokens = postings && this.lexicalIndexes.tokensOf(words);
    // A word FTS5 splits into several tokens is a phrase, which only FTS5 answers.
    if (postings && tokens && tokens.every((t) => t.length === 1)) {
      const terms = tokens.map(([term]) => term);
      const kept = significantQueryTerms(
        terms.map((term) => postings.documentFrequency(term)),
        postings.documents,
      );
      const ranking = postings.search(
        kept.map((i) => terms[i]),
        lexicalScope(filter.scope.tenantId, filter.scope.projectId),
        this.lexicalIndexes.totals(tier),
      );
      return this.firstPassing(ranking.top.bind(ranking), filter, query.size);
    }
    const started = performance.now();
    const hits = this.lexicalOnFts(tier, words, query.size, filter);
    this.lexicalIndexes.spentOnFts(tier, performance.now() - started);
    return hits;
  }

  private lexicalOnFts(
    tier: RetrievalStoreTier,
    words: readonly string[],
    size: number,
    filter: CompiledFilter,
  ): LexicalHit[] {
    const fts = ftsTable(tier);
    const count = this.statement(`SELECT count(*) FROM ${fts} WHERE ${fts} MATCH ?`).pluck();
    const frequencies = words.map((word) => count.get(ftsMatch([word])) as number);
    const documents = this.statement(`SELECT count(*) FROM ${fts}_docsize`).pluck().get() as number;
    const match = ftsMatch(significantQueryTerms(frequencies, documents).map((i) => words[i]));
    if (match === null) return [];
    return this.statement(
      `SELECT d.rid AS rid, d.id AS id, -bm25(${fts}) AS score
       FROM ${fts} JOIN retrieval_documents d ON d.rid = ${fts}.rowid
       WHERE ${fts} MATCH ? AND d.tier = ? AND ${filter.sql}
       ORDER BY bm25(${fts}), d.id LIMIT ?`,
    ).all(match, tier, ...filter.params, size) as LexicalHit[];
  }

  /**
   * The first `size` hits of a ranking that pass the filter: beyond the scope, checked on the
   * best rows in growing rounds until `size` pass or the ranking runs out.
   */
  private firstPassing(
    top: (count: number) => LexicalHit[],
    filter: CompiledFilter,
    size: number,
  ): LexicalHit[] {
    if (filter.scopeOnly) return top(size);
    const chosen: LexicalHit[] = [];
    let checked = 0;
    for (let count = Math.max(16, size * 2); ; count *= 4) {
      const rows = top(count);
      const fresh = rows.slice(checked);
      checked = rows.length;
      const allowed = this.passing(
        fresh.map((row) => row.rid),
        filter,
      );
      chosen.push(...fresh.filter((row) => allowed.has(row.rid)));
      if (chosen.length >= size || rows.length < count) break;
    }
    return chosen.slice(0, size);
  }

  /** A prepared statement per SQL text, kept (filters give a few shapes of SQL per tier). */
  private statement(sql: string): Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      if (this.statements.size >= MAX_STATEMENTS) this.statements.clear();
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  /**
   * kNN: the nearest vectors of the tier, scope and model, best first; beyond the scope, the
   * filter is checked on the best rows in growing rounds until `size` pass (what a filtered kNN
   * pre-filter returns, without scanning the documents' JSON). Past the ANN's limit a round is
   * an exact scan, so a selective filter still finds every neighbour that passes it.
   */
  private nearest(
    tier: RetrievalStoreTier,
    vector: ModelVector,
    filter: CompiledFilter,
    query: StoreCandidateQuery,
  ): (VectorNeighbour & { score: number })[] {
    const search = this.vectors.search(tier, filter.scope, vector);
    const min = query.minSimilarity ?? -Infinity;
    const chosen: VectorNeighbour[] = [];
    const checked = new Set<number>();
    for (let count = Math.max(16, query.size * 2); ; count *= 4) {
      const rows = search.top(count, min);
      const fresh = rows.filter((row) => !checked.has(row.rid));
      fresh.forEach((row) => checked.add(row.rid));
      const allowed = filter.scopeOnly
        ? null
        : this.passing(
            fresh.map((row) => row.rid),
            filter,
          );
      chosen.push(...fresh.filter((row) => !allowed || allowed.has(row.rid)));
      // Enough, or no more rows at or above the similarity floor.
      if (chosen.length >= query.size || rows.length < count) break;
    }
    // Rounds of an approximate search need not agree on order: best first, ties by id.
    chosen.sort((a, b) => b.cosine - a.cosine || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    // Elasticsearch scores a cosine kNN hit (1 + cos) / 2; same scale here.
    return chosen.slice(0, query.size).map((n) => ({ ...n, score: (1 + n.cosine) / 2 }));
  }

  private passing(rids: number[], filter: CompiledFilter): Set<number> {
    if (rids.length === 0) return new Set();
    const passed = this.statement(
      `SELECT d.rid FROM retrieval_documents d
       WHERE d.rid IN (SELECT value FROM json_each(?)) AND ${filter.sql}`,
    )
      .pluck()
      .all(JSON.stringify(rids), ...filter.params) as number[];
    return new Set(passed);
  }

  /**
   * The episodes each turn (by eventId) belongs to, from the episodes' `sourceEventIds`, in
   * episode start order — what the Elasticsearch store answers.
   */
  async episodesOfTurns(scope: RecallScope, eventIds: string[]): Promise<Map<string, string[]>> {
    const byTurn = new Map<string, string[]>();
    if (eventIds.length === 0) return Promise.resolve(byTurn);
    const rows = this.db
      .prepare(
        `SELECT d.id AS episodeId, e.value AS eventId
         FROM retrieval_documents d, json_each(d.doc, '$.sourceEventIds') e
         WHERE d.tier = 'episodes' AND d.tenant_id = ? AND d.project_id = ?
           AND e.value IN (SELECT value FROM json_each(?))
         ORDER BY json_extract(d.doc, '$.startedAt'), d.id`,
      )
      .all(scope.tenantId, scope.projectId, JSON.stringify(eventIds)) as {
      episodeId: string;
      eventId: string;
    }[];
    for (const row of rows) {
      byTurn.set(row.eventId, [...(byTurn.get(row.eventId) ?? []), row.episodeId]);
    }
    return Promise.resolve(byTurn);
  }

  /** The `n` most recently active sessions of a project (user turns and episodes). */
  async recentSessions(scope: RecallScope, n: number): Promise<SessionActivity[]> {
    const rows = this.db
      .prepare(
        `SELECT session_id AS sessionId, max(activity_at) AS lastActivityAt
         FROM retrieval_documents
         WHERE tenant_id = ? AND project_id = ? AND tier IN ('turns', 'episodes')
           AND session_id IS NOT NULL
         GROUP BY session_id ORDER BY lastActivityAt DESC, session_id LIMIT ?`,
      )
      .all(scope.tenantId, scope.projectId, n) as SessionActivity[];
    return Promise.resolve(rows.map((r) => ({ ...r, lastActivityAt: r.lastActivityAt ?? 0 })));
  }

  /**
   * accessCount + n and lastAccessedAt = max, with the core's rule, in one transaction. A memory
   * that is gone, or of another scope, is skipped; SQLite serialises writers, so nothing is lost
   * to a concurrent write and nothing comes back to retry.
   */
  async writeAccess(updates: AccessUpdate[]): Promise<{ failed: AccessUpdate[] }> {
    const read = this.db.prepare(
      `SELECT rid, tenant_id AS tenantId, project_id AS projectId,
              json_extract(doc, '$.accessCount') AS accessCount,
              json_extract(doc, '$.lastAccessedAt') AS lastAccessedAt
       FROM retrieval_documents WHERE tier = 'memories' AND id = ?`,
    );
    const update = this.db.prepare(
      `UPDATE retrieval_documents
       SET doc = json_set(doc, '$.accessCount', ?, '$.lastAccessedAt', ?) WHERE rid = ?`,
    );
    try {
      this.db.transaction(() => {
        for (const u of updates) {
          const stored = read.get(u.memoryId) as StoredCounters | undefined;
          if (!stored || stored.tenantId !== u.tenantId || stored.projectId !== u.projectId) {
            continue;
          }
          const next = applyAccessUpdate(
            { accessCount: stored.accessCount ?? 0, lastAccessedAt: stored.lastAccessedAt ?? 0 },
            u,
          );
          update.run(next.accessCount, next.lastAccessedAt, stored.rid);
        }
      })();
    } catch (error) {
      throw classifyStorageError(error);
    }
    return Promise.resolve({ failed: [] });
  }

  /** The tenants that have documents of a project (a CLI without --tenant takes the only one). */
  async tenantsWithProject(projectId: string): Promise<string[]> {
    const tenants = this.db
      .prepare(
        'SELECT DISTINCT tenant_id FROM retrieval_documents WHERE project_id = ? ORDER BY 1 LIMIT 10',
      )
      .pluck()
      .all(projectId) as string[];
    return Promise.resolve(tenants);
  }

  /**
   * The documents of a tier matching the scope and filter (`compileFilter`), newest
   * `timestamp` first (ties: eventId, then id — Elasticsearch's listing order), at most `size`.
   */
  async list<S>(tier: string, query: StoreListQuery): Promise<{ id: string; source: S }[]> {
    return Promise.resolve(listDocuments<S>(this.db, tierOf(tier), query));
  }
}

function listDocuments<S>(
  db: Database,
  tier: RetrievalStoreTier,
  query: StoreListQuery,
): { id: string; source: S }[] {
  const filter = compileFilter(query.scope, query.filter);
  const rows = db
    .prepare(
      `SELECT d.rid, d.id, d.doc, d.embedding, d.embedding_model FROM retrieval_documents d
       WHERE d.tier = ? AND ${filter.sql}
       ORDER BY d.activity_at DESC NULLS LAST, json_extract(d.doc, '$.eventId'), d.id LIMIT ?`,
    )
    .all(tier, ...filter.params, Math.max(0, query.size)) as DocumentRow[];
  return rows.map((row) => ({ id: row.id, source: sourceOf(row) as S }));
}

interface StoredCounters {
  rid: number;
  tenantId: string;
  projectId: string;
  accessCount: number | null;
  lastAccessedAt: number | null;
}

function tierOf(index: string): RetrievalStoreTier {
  if ((RETRIEVAL_STORE_TIERS as readonly string[]).includes(index)) {
    return index as RetrievalStoreTier;
  }
  throw new MisconfigurationError(
    `"${index}" is not a retrieval tier (${RETRIEVAL_STORE_TIERS.join(', ')})`,
  );
}

function requiredString(value: unknown, field: string): string {
  if (typeof value !== 'string' || value === '') {
    throw new MisconfigurationError(`a retrieval document needs ${field}`, { field });
  }
  return value;
}

/**
 * A memory's next version (a rename, a feedback, a re-promotion) keeps the access counts the
 * store has counted since the version before: the counters are the store's, as Elasticsearch
 * keeps them apart (`engram-memory-access`); a deleted memory's go with it.
 */
function keptAccess(
  document: StoredFields,
  stored: { access_count: number | null; last_accessed_at: number | null },
): StoredFields {
  const count = typeof document.accessCount === 'number' ? document.accessCount : 0;
  const at = typeof document.lastAccessedAt === 'number' ? document.lastAccessedAt : 0;
  return {
    ...document,
    accessCount: Math.max(count, stored.access_count ?? 0),
    lastAccessedAt: Math.max(at, stored.last_accessed_at ?? 0),
  };
}

/** The row of a document: its JSON without the vector, which goes beside it as a blob. */
function documentRow(tier: RetrievalStoreTier, id: string, document: StoredFields) {
  const vector = Array.isArray(document.embedding) ? (document.embedding as number[]) : null;
  const model = typeof document.embeddingModel === 'string' ? document.embeddingModel : null;
  const withVector = vector !== null && vector.length > 0 && model !== null;
  return {
    tier,
    id,
    tenantId: requiredString(document.tenantId, 'tenantId'),
    projectId: requiredString(document.projectId, 'projectId'),
    sessionId: typeof document.sessionId === 'string' ? document.sessionId : null,
    activityAt: typeof document.timestamp === 'number' ? document.timestamp : null,
    text: typeof document.text === 'string' ? document.text : '',
    // The vector goes beside the JSON (the packed copy Elasticsearch keeps is not needed here).
    doc: JSON.stringify({ ...document, embedding: null, embeddingPacked: undefined }),
    embedding: withVector ? vectorBlob(vector) : null,
    embeddingModel: withVector ? model : null,
    embeddingDims: withVector ? vector.length : null,
  };
}

/** The stored document as the indexer wrote it, its vector (if read) back in `embedding`. */
function sourceOf(row: DocumentRow): object {
  const doc = JSON.parse(row.doc) as Record<string, unknown>;
  if (row.embedding && row.embedding_model) {
    // A loop, not Array.from: the iterator protocol costs ~15 µs per 384-d vector.
    const vector = blobVector(row.embedding);
    const embedding = new Array<number>(vector.length);
    for (let i = 0; i < vector.length; i += 1) embedding[i] = vector[i];
    doc.embedding = embedding;
  }
  return doc;
}
