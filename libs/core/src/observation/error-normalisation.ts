import { idOf } from '../ids/deterministic-id';

/**
 * The same failure reported twice differs in its noise: a temp path, a line number, a request
 * id, a time. The observer counts a failure as "the same error" when its message is equal after
 * that noise is replaced by placeholders, so the order below matters: composite tokens (times,
 * uuids, URLs, paths) go before the bare numbers inside them.
 */
const ANSI_ESCAPE = new RegExp(`${String.fromCharCode(27)}\\[[0-9;?]*[A-Za-z]`, 'g');
const ISO_TIMESTAMP =
  /\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?/g;
const CLOCK_TIME = /\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b/g;
const UUID = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi;
// Every pattern whose first element is a repeated class starts only where a run of that class
// starts (a lookbehind, not `\b`): from inside a run the same match would fail again after
// scanning to the run's end, n times over — quadratic on one long token (issue #19: a 100k-char
// errorMessage took 11.5 s, a 5 MB one froze the observer).
const URL = /(?<![a-z0-9+.-])[a-z][a-z0-9+.-]*:\/\/[^\s'"`)\]]+/gi;
// Anything with a directory separator: /tmp/x.ts, ./a/b, C:\repo\a.ts, src/auth/token.ts.
const PATH = /(?<![\w.@~+-])(?:[A-Za-z]:)?(?:\.{0,2}[\\/])?(?:[\w.@~+-]+[\\/])+[\w.@~+-]*/g;
// A bare file name of a common source or config type ("in token.ts"): also noise.
const FILE_NAME =
  /(?<![\w.-])[\w-]+(?:\.[\w-]+)*\.(?:tsx?|jsx?|mjs|cjs|json|py|rb|go|rs|java|kt|cs|cpp|cc|c|h|hpp|md|ya?ml|toml|sh|css|scss|html|vue|svelte|sql|lock|txt)\b/g;
const HEX_LITERAL = /\b0x[0-9a-f]+\b/gi;
// A hex run long enough to be an id (git sha, object id) with at least one digit and one letter.
const HEX_ID = /\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,}\b/gi;
// Standalone numbers (dotted runs — versions, IPs — as one) only: `TS2345` and `E11000` are error codes, not noise.
const NUMBER = /\b\d+(?:\.\d+)*\b/g;

const MAX_NORMALISED_CHARS = 300;
/**
 * Only the message's head is normalised: the key keeps 300 characters, and a message is noise
 * long before 16k characters. Bounds the work per event whatever the producer sent.
 */
export const MAX_NORMALISED_INPUT_CHARS = 16_384;

/** The message with its noise replaced (`<time>`, `<id>`, `<url>`, `<path>`, `<hex>`, `<n>`). */
export function normaliseErrorMessage(message: string): string {
  const normalised = message
    .slice(0, MAX_NORMALISED_INPUT_CHARS)
    .replace(ANSI_ESCAPE, '')
    .replace(ISO_TIMESTAMP, '<time>')
    .replace(CLOCK_TIME, '<time>')
    .replace(UUID, '<id>')
    .replace(URL, '<url>')
    .replace(PATH, '<path>')
    .replace(FILE_NAME, '<path>')
    .replace(HEX_LITERAL, '<hex>')
    .replace(HEX_ID, '<hex>')
    .replace(NUMBER, '<n>')
    .replace(/\s+/g, ' ')
    .trim();
  return normalised.slice(0, MAX_NORMALISED_CHARS);
}

/** The natural key of an error pattern: the tool and the normalised message (graph `hash`). */
export function errorKeyOf(toolName: string, normalisedError: string): string {
  return idOf('error_pattern', toolName, normalisedError);
}
