// BM25 as SQLite FTS5 computes it (ext/fts5/fts5_aux.c, fts5Bm25Function), so that the embedded
// store's in-memory lexical index ranks exactly as its FTS5 index does; which words of a query
// are worth searching for; and when building that in-memory index pays.

/** FTS5's BM25 parameters (fixed in SQLite, not configurable). */
export const BM25_K1 = 1.2;
export const BM25_B = 0.75;

/** FTS5's floor for the IDF of a term in half the documents or more. */
export const BM25_MIN_IDF = 1e-6;

/**
 * FTS5's IDF of a term in `withTerm` of `documents` documents: ln((N − n + 0.5) / (n + 0.5)),
 * and 1e-6 where that is ≤ 0 (n ≥ N/2): such a term changes no ranking.
 */
export function bm25Idf(documents: number, withTerm: number): number {
  const idf = Math.log((documents - withTerm + 0.5) / (withTerm + 0.5));
  return idf <= 0 ? BM25_MIN_IDF : idf;
}

/**
 * One term's share of a document's score: idf · f·(k1 + 1) / (f + k1·(1 − b + b·D/avgdl)), `f`
 * its occurrences in the document, `D` the document's length in tokens. The operations are
 * FTS5's, in its order, so that the sum over the query's terms (in query order) is the same
 * double as `-bm25()`.
 */
export function bm25TermScore(
  idf: number,
  frequency: number,
  length: number,
  averageLength: number,
): number {
  return (
    idf *
    ((frequency * (BM25_K1 + 1.0)) /
      (frequency + BM25_K1 * (1 - BM25_B + (BM25_B * length) / averageLength)))
  );
}

export interface QueryTermRule {
  /** Below this many documents every term is searched for (a small index is fast anyway). */
  minDocuments: number;
  /** At most this many terms are searched for, the rarest. */
  maxTerms: number;
}

/**
 * From 10,000 documents, where a term in half of them costs FTS5 ~15 ms to score; at most 32
 * terms: more than any question or search phrase has once stop words are gone, while a pasted
 * prompt or log can have hundreds (Elasticsearch's more_like_this keeps 25 for the same reason).
 */
export const DEFAULT_QUERY_TERM_RULE: QueryTermRule = { minDocuments: 10_000, maxTerms: 32 };

/**
 * Which terms of a lexical query to search for, given how many of `documents` documents contain
 * each (in query order). Returns the indices kept, in query order.
 *
 * - A term no document contains is dropped: it matches nothing and scores nothing.
 *
 * From `minDocuments` documents (below, every other term is kept):
 *
 * - A term in half the documents or more is dropped: BM25 gives it an IDF ≤ 0, which FTS5 floors
 *   to 1e-6, so it adds ~1e-6 to a score (no ranking changes), yet every document it matches
 *   has to be scored — half the index or more. The documents that contain nothing but such
 *   terms are the ones no longer found; with FTS5 they came last, scored ~1e-6.
 * - When every term is that common, the rarest one is kept (ties: the first), so that a query of
 *   common words still finds what it did, in the same order.
 * - At most `maxTerms`, the rarest (ties: the first): the terms left out are the most common,
 *   those that weigh least in every score.
 */
export function significantQueryTerms(
  frequencies: readonly number[],
  documents: number,
  rule: QueryTermRule = DEFAULT_QUERY_TERM_RULE,
): number[] {
  const present = frequencies.flatMap((df, index) => (df > 0 ? [index] : []));
  if (documents < rule.minDocuments) return present;
  const rarestFirst = (indices: number[]) =>
    [...indices].sort((a, b) => frequencies[a] - frequencies[b] || a - b);
  const informative = present.filter((index) => 2 * frequencies[index] < documents);
  const kept = informative.length > 0 ? informative : rarestFirst(present).slice(0, 1);
  if (kept.length <= rule.maxTerms) return kept;
  return rarestFirst(kept)
    .slice(0, rule.maxTerms)
    .sort((a, b) => a - b);
}

/**
 * Whether to build an in-memory index now that the queries answered without it have cost
 * `spentMs`: once they have cost what the build is expected to (ski rental). A process that
 * answers one query (a hook, `engram recall`) never builds; one that answers many (`engram
 * start`) builds early; neither pays more than twice what the better choice in hindsight costs.
 */
export function indexBuildDue(spentMs: number, expectedBuildMs: number): boolean {
  return spentMs >= expectedBuildMs;
}
