import stem from 'wink-porter2-stemmer';
import { eng as ENGLISH_STOP_WORDS } from 'stopword';
import { BoundedMemo } from './bounded-memo';

/**
 * Words that carry no intent in a developer's prompt to an agent, on top of the general English
 * stop words: politeness, modal verbs and conversational filler ("please can you now also just
 * make sure …"). Without them two prompts that only share "please … could you" look related.
 */
const CONVERSATIONAL_STOP_WORDS = [
  'please',
  'pls',
  'thanks',
  'thank',
  'okay',
  'yes',
  'yeah',
  'yep',
  'nope',
  'sure',
  'hey',
  'can',
  'could',
  'would',
  'should',
  'shall',
  'will',
  'must',
  'might',
  'may',
  'let',
  'lets',
  'now',
  'also',
  'just',
  'again',
  'still',
  'really',
  'actually',
  'maybe',
  'probably',
  'perhaps',
  'want',
  'wanted',
  'need',
  'needs',
  'think',
  'like',
  'well',
  'thing',
  'things',
  'something',
  'anything',
  'everything',
  'stuff',
  'way',
  'bit',
  'lot',
  'get',
  'got',
  'going',
  'gonna',
  'try',
  'trying',
  'see',
  'look',
  'looks',
  'know',
  'one',
  'ones',
  'much',
  'many',
  'use',
  'using',
  'used',
  'via',
  'etc',
  'don',
  'doesn',
  'didn',
  'isn',
  'aren',
  'wasn',
  'won',
  'can',
  'cannot',
  'let',
  'ok',
] as const;

const STOP_WORDS: ReadonlySet<string> = new Set([
  ...ENGLISH_STOP_WORDS.map((word) => word.toLowerCase()),
  ...CONVERSATIONAL_STOP_WORDS,
]);

/** Tokens shorter than this carry too little meaning ("a", "js", "of"). */
const MIN_TOKEN_LENGTH = 3;
/** Words longer than this are not words (the longest English words are about 30 letters). */
export const MAX_WORD_LENGTH = 64;

// A file name: a base name with a short extension ("refresh.ts", "README.md").
const FILE_NAME = /^[\w-]{2,}\.[a-z][a-z0-9]{0,5}$/i;
// Punctuation around a whitespace-separated token ("(src/a.ts)," → "src/a.ts").
const EDGE_PUNCTUATION = /^[^\w./~-]+|[^\w/]+$/g;
const WORD_PATTERN = /[a-z0-9]+/g;

/**
 * The intent keywords of a prompt (seed 000 `intent_keywords`), as a set in first-seen order:
 * lower-cased, camelCase / snake_case / kebab-case identifiers and file paths split into their
 * parts (a file's base name, e.g. `refresh.ts`, kept whole as well), English and conversational stop words
 * and tokens under 3 characters dropped, each word Porter2-stemmed.
 */
export function intentKeywords(text: string): string[] {
  // The whitespace tokens of `text.split(/\s+/)`, found by a scan (no regex, no token array).
  const keywords: string[] = [];
  let seen: Set<string> | null = null;
  let start = -1;
  for (let i = 0; i <= text.length; i += 1) {
    if (i < text.length && !isRegExpSpace(text.charCodeAt(i))) {
      if (start < 0) start = i;
      continue;
    }
    if (start < 0) continue;
    // A token under MIN_TOKEN_LENGTH characters has no keywords (nor a file name): no lookup.
    const token = i - start < MIN_TOKEN_LENGTH ? null : text.slice(start, i);
    start = -1;
    if (token === null) continue;
    for (const keyword of tokenKeywords.get(token)) {
      // A prompt has a few keywords: a linear scan beats a Set until it has many.
      if (seen === null) {
        if (keywords.includes(keyword)) continue;
        keywords.push(keyword);
        if (keywords.length >= SMALL_SET) seen = new Set(keywords);
      } else if (!seen.has(keyword)) {
        seen.add(keyword);
        keywords.push(keyword);
      }
    }
  }
  return keywords;
}

const SMALL_SET = 32;

/**
 * Whether a UTF-16 code unit matches `\s` (ECMAScript WhiteSpace and LineTerminator: tab, line
 * feed, vertical tab, form feed, carriage return, space, U+00A0, U+1680, U+2000–U+200A, U+2028,
 * U+2029, U+202F, U+205F, U+3000, U+FEFF). A spec checks it against the regex on every code unit.
 */
export function isRegExpSpace(code: number): boolean {
  if (code <= 32) return code === 32 || (code >= 9 && code <= 13);
  if (code < 0xa0) return false;
  if (code === 0xa0 || code === 0x1680 || code === 0x3000 || code === 0xfeff) return true;
  if (code < 0x2000) return false;
  return code <= 0x200a || code === 0x2028 || code === 0x2029 || code === 0x202f || code === 0x205f;
}

// A developer's vocabulary is small and repetitive: the keywords of a whitespace token are
// memoised. Profiling showed identifier splitting and Porter2's regexes dominating the segmenter's
// cost before this. Bounded, so memory stays flat on any input: at most 100k tokens of at most
// 128 characters (a few tens of MB at worst); longer ones (long URLs or paths, rare) are computed.
const tokenKeywords = new BoundedMemo<readonly string[]>(keywordsOfToken, 100_000, 128);

/**
 * One whitespace token's keywords (what intentKeywords memoises). A token with a slash or a file
 * name is a path: its base name ("refresh.ts") names one file exactly and is kept whole, its
 * parts only name topics.
 */
export function keywordsOfToken(token: string): string[] {
  const keywords: string[] = [];
  const bare = token.replace(EDGE_PUNCTUATION, '');
  if (bare.includes('/') || FILE_NAME.test(bare)) {
    const baseName = (bare.split('/').pop() ?? '').toLowerCase();
    if (FILE_NAME.test(baseName)) keywords.push(baseName);
  }
  for (const word of splitIdentifiers(bare).toLowerCase().match(WORD_PATTERN) ?? []) {
    if (word.length < MIN_TOKEN_LENGTH || STOP_WORDS.has(word) || /^\d+$/.test(word)) continue;
    // A run this long is a blob (base64, a hash, minified code), not a word, and Porter2's
    // suffix regexes are quadratic on it (issue #19: a 64k-character token took 33 s).
    if (word.length > MAX_WORD_LENGTH) continue;
    const stemmed = stem(word);
    if (stemmed.length >= MIN_TOKEN_LENGTH && !STOP_WORDS.has(stemmed)) keywords.push(stemmed);
  }
  return keywords;
}

/** "parseHTTPResponse_body" → "parse HTTP Response body". */
function splitIdentifiers(text: string): string {
  return text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .replace(/[_-]+/g, ' ');
}

/** Jaccard similarity |a ∩ b| / |a ∪ b| of two keyword sets; 0 when both are empty. */
export function jaccard(a: Iterable<string>, b: Iterable<string>): number {
  const left = a instanceof Set ? (a as Set<string>) : new Set(a);
  const right = b instanceof Set ? (b as Set<string>) : new Set(b);
  if (left.size === 0 && right.size === 0) return 0;
  let shared = 0;
  for (const item of left) if (right.has(item)) shared += 1;
  return shared / (left.size + right.size - shared);
}

/**
 * jaccard() of two arrays already free of duplicates (keyword sets, episode bags), without
 * building Sets: the boundary decision runs it for every prompt.
 */
export function jaccardOfUnique(a: readonly string[], b: readonly string[]): number {
  if (a.length === 0 && b.length === 0) return 0;
  const small = a.length <= b.length ? a : b;
  const large = a.length <= b.length ? b : a;
  let shared = 0;
  if (large.length <= 64) {
    for (const item of small) if (large.includes(item)) shared += 1;
  } else {
    const lookup = new Set(large);
    for (const item of small) if (lookup.has(item)) shared += 1;
  }
  return shared / (a.length + b.length - shared);
}

/**
 * Whitespace-separated words: the seed's terse-prompt rule counts these. With `stopAt` ≥ 1,
 * counting stops there (the rule only asks whether a prompt has fewer than 5 words):
 * `wordCount(text, n) === Math.min(wordCount(text), n)`.
 */
export function wordCount(text: string, stopAt = Infinity): number {
  // A scan, not split(): it runs on every prompt and allocates nothing.
  let words = 0;
  let inWord = false;
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    const space = code === 32 || (code >= 9 && code <= 13) || code === 160;
    if (!space && !inWord) {
      words += 1;
      if (words >= stopAt) return words;
    }
    inWord = !space;
  }
  return words;
}
