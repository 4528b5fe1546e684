// Type declarations for the two small text packages the keyword extractor uses (neither ships
// its own).
declare module 'wink-porter2-stemmer' {
  /** Porter2 (Snowball English) stem of one lower-case word. */
  function stem(word: string): string;
  export = stem;
}

declare module 'stopword' {
  /** English stop words. */
  export const eng: string[];
}
