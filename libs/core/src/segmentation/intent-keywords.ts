import stem from 'wink-porter2-stemmer';
import { eng as ENGLISH_STOP_WORDS } from 'stopword';

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
  const keywords = new Set<string>();
  for (const token of text.split(/\s+/)) {
    if (token === '') continue;
    for (const keyword of tokenKeywords(token)) keywords.add(keyword);
  }
  return [...keywords];
}

// A developer's vocabulary is small and repetitive: the keywords of a whitespace token are
// memoised (bounded: dropped when full, so memory stays flat on any input). Profiling showed
// identifier splitting and Porter2's regexes dominating the segmenter's cost before this.
const TOKEN_CACHE_LIMIT = 100_000;
const tokenCache = new Map<string, readonly string[]>();

function tokenKeywords(token: string): readonly string[] {
  let keywords = tokenCache.get(token);
  if (keywords === undefined) {
    if (tokenCache.size >= TOKEN_CACHE_LIMIT) tokenCache.clear();
    keywords = computeTokenKeywords(token);
    tokenCache.set(token, keywords);
  }
  return keywords;
}

/**
 * One whitespace token's keywords. A token with a slash or a file name is a path: its base name
 * ("refresh.ts") names one file exactly and is kept whole, its parts only name topics.
 */
function computeTokenKeywords(token: string): string[] {
  const keywords: string[] = [];
  const bare = token.replace(EDGE_PUNCTUATION, '');
  if (bare.includes('/') || FILE_NAME.test(bare)) {
    const baseName = (bare.split('/').pop() ?? '').toLowerCase();
    if (FILE_NAME.test(baseName)) keywords.push(baseName);
  }
  for (const word of splitIdentifiers(bare).toLowerCase().match(WORD_PATTERN) ?? []) {
    if (word.length < MIN_TOKEN_LENGTH || STOP_WORDS.has(word) || /^\d+$/.test(word)) continue;
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
  const [small, large] = a.length <= b.length ? [a, b] : [b, a];
  let shared = 0;
  if (large.length <= 64) {
    for (const item of small) if (large.includes(item)) shared += 1;
  } else {
    const lookup = new Set(large);
    for (const item of small) if (lookup.has(item)) shared += 1;
  }
  return shared / (a.length + b.length - shared);
}

/** Whitespace-separated words: the seed's terse-prompt rule counts these. */
export function wordCount(text: string): number {
  // A scan, not split(): it runs on every prompt and allocates nothing.
  let words = 0;
  let inWord = false;
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    const space = code === 32 || (code >= 9 && code <= 13) || code === 160;
    if (!space && !inWord) words += 1;
    inWord = !space;
  }
  return words;
}
