// The BM25 query text of the embedded retrieval store: a free-text query as FTS5 words.

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
export function ftsMatch(words: readonly string[]): string | null {
  return words.length === 0 ? null : words.map((word) => `"${word}"`).join(' OR ');
}

/** The FTS5 query for a free-text query (`queryWords`, OR-ed); null when no word is left. */
export function ftsQuery(text: string): string | null {
  return ftsMatch(queryWords(text));
}
