import { indexBuildDue } from '@engram/core';
import type { Database, Statement } from 'better-sqlite3';
import {
  fts5Totals,
  LexicalPostings,
  lexicalScope,
  type Bm25Totals,
  type LexicalDocument,
} from './lexical-postings';

// BM25 of the embedded retrieval store without FTS5's cost per match. A query is the OR of its
// words (Elasticsearch's `match`), and FTS5 scores every document that has any of them through
// bm25() — ~3 µs a row, plus a lookup of the row to check its scope: at 100k memories a question
// of frequent words matches ~13k documents and took ~50 ms. Here a tier's postings are held in
// memory (term → document slots and frequencies; each document's length and scope), built from
// the FTS5 index itself (fts5vocab: FTS5's own tokens, so the same stemming) and kept current by
// replaying the change log every write appends to (vector-index.ts). A query walks its terms'
// postings in typed arrays with FTS5's formula and the statistics bm25() takes (FTS5's own row
// and token totals, the whole tier's document frequencies, each document's length), so it gives
// FTS5's scores and order, in about a millisecond at 100k.
//
// Building costs ~30 µs a document (~3 s at 100k on 2 cores), so it is done only where it pays:
// once the tier's FTS5 queries in this process have cost as much (ski rental, indexBuildDue) —
// never in a hook or a one-shot `engram recall`, after a few dozen queries at 100k in `engram
// start` — or when asked (`warm`: the benchmark). Memory: ~25 MB at 100k memories.
//
// The postings themselves (LexicalPostings) are in lexical-postings.ts; this module builds them,
// keeps them current and decides when they pay.

/** The tokenizer of the store's FTS5 tables, and of the temporary one that tokenizes here. */
export const FTS_TOKENIZER = 'porter unicode61';

export interface LexicalIndexOptions {
  /**
   * When a tier's postings are built: `auto` once its FTS5 queries in this process have cost
   * what the build is expected to (ski rental); `always` at its first query; `never` (FTS5
   * only). Default `auto`.
   */
  build?: 'auto' | 'always' | 'never';
  /** The expected build cost per document, ms (default 0.03: ~3 s for 100k on 2 cores). */
  buildMsPerDocument?: number;
}

export const DEFAULT_LEXICAL_INDEX_OPTIONS: Required<LexicalIndexOptions> = {
  build: 'auto',
  buildMsPerDocument: 0.03,
};

/** The change log every write appends to (vector-index.ts): its last position. */
const CHANGE_HEAD = 'SELECT coalesce(max(seq), 0) FROM retrieval_vector_changes';

/** A scratch FTS5 table with the store's tokenizer: FTS5's tokens of any text, by row. */
const TOKENIZER_TABLES = `
CREATE VIRTUAL TABLE IF NOT EXISTS temp.engram_lexical_tokens USING fts5(
  text, tokenize = '${FTS_TOKENIZER}', content = '');
CREATE VIRTUAL TABLE IF NOT EXISTS temp.engram_lexical_tokens_vocab
  USING fts5vocab(temp, engram_lexical_tokens, instance);`;

/** A replay of more documents than this (and a quarter of the tier) rebuilds instead. */
const REPLAY_MIN_REBUILD = 1_000;

/** Words whose tokens are remembered; past it the memory starts again (a query has ~10). */
const TOKEN_CACHE_WORDS = 10_000;

/** The text FTS5 indexed for a document: its `text`, when a string (sqlite-retrieval-documents.ts, documentRow). */
const DOCUMENT_TEXT = `CASE json_type(doc, '$.text') WHEN 'text' THEN json_extract(doc, '$.text') ELSE '' END`;

interface HeldTier {
  postings: LexicalPostings;
  /** The change-log position the postings reflect. */
  seq: number;
}

/**
 * The in-memory postings of each tier of one store, built when they pay (see the top of the
 * file) and brought up to the change log's head before each query, so writes of any process
 * are seen — the contract FTS5 gave.
 */
export class LexicalIndexes {
  private readonly options: Required<LexicalIndexOptions>;
  private readonly held = new Map<string, HeldTier>();
  private readonly spentMs = new Map<string, number>();
  private readonly tokenCache = new Map<string, string[]>();
  private readonly statements = new Map<string, Statement>();
  private tokenizerReady = false;

  constructor(
    private readonly db: Database,
    private readonly ftsTable: (tier: string) => string,
    options: LexicalIndexOptions = {},
  ) {
    this.options = { ...DEFAULT_LEXICAL_INDEX_OPTIONS, ...options };
  }

  /** The tier's postings, current with the change log; null while FTS5 answers for the tier. */
  postings(tier: string): LexicalPostings | null {
    const held = this.held.get(tier);
    if (held) {
      this.catchUp(tier, held);
      return held.postings;
    }
    return this.options.build === 'always' ? this.warm(tier) : null;
  }

  /** Counts what FTS5 spent on a query of the tier, and builds its postings when that is due. */
  spentOnFts(tier: string, ms: number): void {
    if (this.options.build !== 'auto' || this.held.has(tier)) return;
    const spent = (this.spentMs.get(tier) ?? 0) + ms;
    this.spentMs.set(tier, spent);
    const documents = this.statement(`SELECT count(*) FROM ${this.ftsTable(tier)}_docsize`)
      .pluck()
      .get() as number;
    if (indexBuildDue(spent, documents * this.options.buildMsPerDocument)) this.warm(tier);
  }

  /** The tier's postings now, built if they were not (`never` too: an explicit request). */
  warm(tier: string): LexicalPostings {
    let held = this.held.get(tier);
    if (held) {
      this.catchUp(tier, held);
    } else {
      held = this.build(tier);
      this.held.set(tier, held);
    }
    return held.postings;
  }

  /** FTS5's running totals of the tier (what its bm25() takes for N and average length). */
  totals(tier: string): Bm25Totals | null {
    const block = this.statement(`SELECT block FROM ${this.ftsTable(tier)}_data WHERE id = 1`)
      .pluck()
      .get() as Buffer | undefined;
    return fts5Totals(block);
  }

  /** Whether the tier's postings are held (benchmarks, tests). */
  holds(tier: string): boolean {
    return this.held.has(tier);
  }

  /** FTS5's tokens of each word (one for a plain word; a word FTS5 splits gives several). */
  tokensOf(words: readonly string[]): string[][] {
    const missing = [...new Set(words.filter((word) => !this.tokenCache.has(word)))];
    if (missing.length > 0) {
      if (this.tokenCache.size + missing.length > TOKEN_CACHE_WORDS) this.tokenCache.clear();
      const tokens = this.tokenize(missing);
      missing.forEach((word, i) => this.tokenCache.set(word, tokens.get(i + 1) ?? []));
    }
    return words.map((word) => this.tokenCache.get(word) ?? []);
  }

  close(): void {
    this.held.clear();
    this.statements.clear();
  }

  private head(): number {
    return this.statement(CHANGE_HEAD).pluck().get() as number;
  }

  /** The statements of every query, prepared once. */
  private statement(sql: string): Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  /** All documents of the tier and FTS5's tokens of them, read in one snapshot. */
  private build(tier: string): HeldTier {
    const vocab = `engram_lexical_vocab_${tier}`;
    this.db.exec(
      `CREATE VIRTUAL TABLE IF NOT EXISTS temp.${vocab}
       USING fts5vocab(main, ${this.ftsTable(tier)}, instance)`,
    );
    return this.db.transaction(() => {
      const seq = this.head();
      const documents = this.db
        .prepare(
          'SELECT rid, id, tenant_id, project_id FROM retrieval_documents WHERE tier = ? ORDER BY rid',
        )
        .raw()
        .all(tier) as [number, string, string, string][];
      const postings = LexicalPostings.fromInstances(
        documents.map(([rid, id, tenantId, projectId]) => ({
          rid,
          id,
          scope: lexicalScope(tenantId, projectId),
        })),
        this.db.prepare(`SELECT term, doc FROM temp.${vocab}`).raw().iterate() as Iterable<
          [string, number]
        >,
      );
      return { postings, seq };
    })();
  }

  /**
   * Replays the log after the postings' position: every document of the tier named there is
   * removed and, if it still exists, added again as it is now (so a replay is idempotent). A
   * backlog of more than a quarter of the tier (a re-index) is read afresh instead: tokenizing
   * documents one by one costs more than reading FTS5's tokens of all of them.
   */
  private catchUp(tier: string, held: HeldTier): void {
    if (this.head() <= held.seq) return;
    const rebuilt = this.db.transaction(() => {
      const head = this.head();
      const rids = this.statement(
        `SELECT DISTINCT rid FROM retrieval_vector_changes WHERE seq > ? AND seq <= ? AND tier = ?`,
      )
        .pluck()
        .all(held.seq, head, tier) as number[];
      if (rids.length > Math.max(REPLAY_MIN_REBUILD, held.postings.documents / 4)) return true;
      for (const rid of rids) held.postings.remove(rid);
      for (const doc of this.documentsNow(tier, rids)) held.postings.add(doc);
      held.seq = head;
      return false;
    })();
    if (rebuilt) Object.assign(held, this.build(tier));
    held.postings.compactIfDue();
  }

  /** The documents of the tier among `rids` as they are now, tokenized by FTS5. */
  private documentsNow(tier: string, rids: readonly number[]): LexicalDocument[] {
    if (rids.length === 0) return [];
    this.ensureTokenizer();
    const list = JSON.stringify(rids);
    const rows = this.db
      .prepare(
        `SELECT rid, id, tenant_id AS tenantId, project_id AS projectId FROM retrieval_documents
         WHERE tier = ? AND rid IN (SELECT value FROM json_each(?))`,
      )
      .all(tier, list) as { rid: number; id: string; tenantId: string; projectId: string }[];
    this.db
      .prepare(
        `INSERT INTO temp.engram_lexical_tokens (rowid, text)
         SELECT rid, ${DOCUMENT_TEXT} FROM retrieval_documents
         WHERE tier = ? AND rid IN (SELECT value FROM json_each(?))`,
      )
      .run(tier, list);
    const terms = new Map<number, Map<string, number>>();
    const lengths = new Map<number, number>();
    try {
      const instances = this.db
        .prepare('SELECT term, doc FROM temp.engram_lexical_tokens_vocab')
        .raw()
        .all() as [string, number][];
      for (const [term, rid] of instances) {
        const counts = terms.get(rid) ?? new Map<string, number>();
        terms.set(rid, counts);
        counts.set(term, (counts.get(term) ?? 0) + 1);
        lengths.set(rid, (lengths.get(rid) ?? 0) + 1);
      }
    } finally {
      this.clearTokenizer();
    }
    return rows.map((row) => ({
      rid: row.rid,
      id: row.id,
      scope: lexicalScope(row.tenantId, row.projectId),
      terms: terms.get(row.rid) ?? new Map(),
      length: lengths.get(row.rid) ?? 0,
    }));
  }

  /** Tokens by row number (1-based), in order. */
  private tokenize(texts: readonly string[]): Map<number, string[]> {
    this.ensureTokenizer();
    return this.db.transaction(() => {
      const insert = this.db.prepare(
        'INSERT INTO temp.engram_lexical_tokens (rowid, text) VALUES (?, ?)',
      );
      texts.forEach((text, i) => insert.run(i + 1, text));
      const tokens = new Map<number, string[]>();
      try {
        const rows = this.db
          .prepare('SELECT doc, term FROM temp.engram_lexical_tokens_vocab ORDER BY doc, offset')
          .raw()
          .all() as [number, string][];
        for (const [row, term] of rows) tokens.set(row, [...(tokens.get(row) ?? []), term]);
      } finally {
        this.clearTokenizer();
      }
      return tokens;
    })();
  }

  private ensureTokenizer(): void {
    if (this.tokenizerReady) return;
    this.db.exec(TOKENIZER_TABLES);
    this.tokenizerReady = true;
  }

  private clearTokenizer(): void {
    this.db.exec(
      "INSERT INTO temp.engram_lexical_tokens (engram_lexical_tokens) VALUES ('delete-all')",
    );
  }
}
