import {
  significantQueryTerms,
  type ModelVector,
  type StoreCandidateQuery,
  type StoreCandidates,
} from '@engram/core';
import type { Statement } from 'better-sqlite3';
import type { LexicalIndexes } from './lexical-index';
import { lexicalScope, type LexicalHit } from './lexical-postings';
import {
  ftsTable,
  sourceOf,
  SOURCES_OF,
  SOURCES_WITHOUT_VECTORS_OF,
  tierOf,
  type DocumentRow,
  type RetrievalStoreTier,
} from './sqlite-retrieval-documents';
import { compileFilter, type CompiledFilter } from './sqlite-retrieval-filter';
import { ftsMatch, queryWords } from './sqlite-retrieval-query-text';
import type { StatementCache } from './sqlite-statement-cache';
import type { VectorIndexes, VectorNeighbour } from './vector-index';

/** The candidate searches of the embedded retrieval store: BM25 and kNN, filtered (SPEC §7). */
export class SqliteCandidateSearch {
  constructor(
    private readonly statements: StatementCache,
    private readonly vectors: VectorIndexes,
    private readonly lexicalIndexes: LexicalIndexes,
  ) {}

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

  /** A prepared statement per SQL text, kept (`StatementCache`). */
  private statement(sql: string): Statement {
    return this.statements.get(sql);
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
}
