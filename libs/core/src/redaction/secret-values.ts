import { containsRedactionMarker } from './types';

/**
 * Whether a value assigned to a secret name is itself a secret. The name says "secret"; these
 * checks keep the ordinary text that also follows such names in code and prose
 * (`password: string`, `token: process.env.TOKEN`, `secretKey: Uint8Array`,
 * `password: "Must be 8 characters"`) and placeholders that hide nothing (`<your-key>`,
 * `${API_KEY}`, `changeme`, `********`).
 *
 * Decisions (a false positive costs a little recall in memory; a false negative leaks):
 * - shorter than 8 characters → kept (`token: abc`, `pass: 1234`);
 * - letters only → kept: a word or an identifier (`supersecret`, `required`, `hashedPassword`).
 *   A real all-letter password therefore survives; random secrets almost always contain a
 *   digit or a symbol;
 * - words joined by `_`, `-` or `.` → kept (`GITHUB_TOKEN`, `my-secret-token`, `__WS_TOKEN__`);
 * - these word checks ignore leading sigils and trailing punctuation (`?Name`, `kerberos:`,
 *   `**SHOULD**`);
 * - camelCase identifiers → kept (`authData1`, `OAuth2Client`, `Uint8Array`): a hump, words of
 *   3+ letters, at most 2 digits. `S3cr3tPw`, `MyS3cretPass`, `SuperSecret123` are secrets;
 * - code → kept: member chains (`process.env.X`, `auth_1.default`, `c.token+d`), calls and
 *   indexes (`os.getenv(`, `params[:password]`), negations (`!isValid`), comparisons (`==x`),
 *   values starting with a bracket, template interpolation (`${`), and fragments such as `);`,
 *   `=>`, `??`, `||`;
 * - paths and URLs → kept (URL credentials have their own rule), unless a path segment is a
 *   generated run (`/GU9Wx2…` is an AWS secret that starts with `/`, not a path);
 * - placeholders → kept: `<…>`, `[…]`, `${…}`, `$(…)`, `$VAR`, `{{…}}`, `{name}`, `%VAR%`, one
 *   repeated character (`********`, `xxxxxxxx`), masks (`sk-***abcd`), and values containing
 *   changeme, change_me, replace_me, placeholder, example, redacted, dummy, notasecret, or
 *   starting with `your_`/`your-`/`insert_`/`enter_`;
 * - non-ASCII text → kept (messages in other languages; secrets are ASCII);
 * - values with whitespace are prose (kept) when most words are plain words, file names or
 *   numbers (`"Invalid token provided"`); `"p@ss w0rd!"` and `Bearer abc123def` are secrets. A
 *   passphrase of dictionary words survives;
 * - anything else of 8+ characters, digits only included (`12345678` is a PIN), is a secret.
 */

export const MIN_SECRET_LENGTH = 8;

const PLACEHOLDER_PATTERNS: readonly RegExp[] = [
  /^<[^<>]*>$/, // <your-api-key>
  /^\[[^[\]]*\]$/, // [your key]
  /\$\{/, // ${VAR}, ${{ secrets.X }}, `prefix-${value}`
  /^\$\(/, // $(command)
  /^\$[A-Za-z_][A-Za-z0-9_]*$/, // $VAR
  /^\{\{/, // {{ template }}
  /^\{[A-Za-z_][A-Za-z0-9_.-]*\}$/, // {token}
  /^%[A-Za-z_][A-Za-z0-9_]*%$/, // %VAR%
  /^(.)\1*$/, // ********, xxxxxxxx, 00000000
  /^[xX*•#._-]+$/, // xxxx-xxxx
  /\*{3}|•{3}|x{6}|X{6}/, // partly masked: sk-****abcd
  /^(?:your|insert|enter|put)[-_ ]/i,
  /[-_](?:here|goes[-_]here)$/i,
  /change[-_]?me|replace[-_]?me|placeholder|example|redacted|dummy|notasecret/i,
];

/** A value that stands for a secret without being one. */
export function isPlaceholder(value: string): boolean {
  return PLACEHOLDER_PATTERNS.some((pattern) => pattern.test(value));
}

const URL_PATTERN = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//;
const PATH_PATTERNS: readonly RegExp[] = [
  /^(?:~|\.{1,2})?\//, // /etc/x, ./x, ../x, ~/x
  /^[A-Za-z]:[\\/]/, // C:\x
  /^[\w.-]+(?:\/[\w.-]+)+\.[A-Za-z][A-Za-z0-9]{0,5}$/, // certs/client.key
];
/**
 * Code, not a literal: a member chain (`process.env.API_KEY`, `auth_1.default`, `c.token+x`,
 * `Ar.AuthTokenAndExpiration=void`, `Foo::bar`), a call or an index (`os.getenv(`,
 * `params[:password]`, `isEqual?.(`). A dotted password such as `abc123.def456` is taken for
 * code too: compiled JavaScript is far more common in tool output than dotted passwords.
 */
const MEMBER_CHAIN = /^[A-Za-z_$][\w$]*(?:(?:\?\.|\.|::)[A-Za-z_$][\w$]*)+(?![\w$])/;
const CALL_OR_INDEX = /^[A-Za-z_$][\w$]*(?:(?:\?\.|\.)[A-Za-z_$][\w$]*)*(?:\?\.)?[([]/;
/** Operators and fragments no generated secret contains: `);`, `){`, `},`, `=>`, `??`, `||`. */
const CODE_FRAGMENT = /\)[;{.,]|\}[;,)]|=>|\?\?|\|\||&&|\breturn\b|\bfunction\b/;
/** Unquoted code starts with a bracket (`(newPassword: string) => void`) or `=` (`==x`). */
const STARTS_LIKE_CODE = /^[([{=]/;
const LETTERS_ONLY = /^[A-Za-z]+$/;
/** `GITHUB_TOKEN`, `my-secret-token`, `__WS_TOKEN__`. */
const JOINED_WORDS = /^_*[A-Za-z]+(?:[_.-]+[A-Za-z]+)*_*$/;
const NON_ASCII = /[^\x20-\x7e\t\r\n]/;
/** No one names a variable with more characters than this (and it bounds the word split). */
const MAX_IDENTIFIER_LENGTH = 128;
const IDENTIFIER_CHARS = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const CAMEL_HUMP = /[a-z0-9][A-Z]/;
const IDENTIFIER_WORD = /[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+/g;
const DIGITS = /\d/g;
const LOWER = /[a-z]/;
const UPPER = /[A-Z]/;
const DIGIT = /\d/;
/** A word, a file name (`refresh.ts`), a path of words, a number or a dash. */
const PROSE_WORD =
  /^[("'[]?(?:[A-Za-z]+(?:[-'’._/][A-Za-z]+)*|\d+(?:[.,:]\d+)*%?)[)"'\].,:;!?]*$|^[-–—&/]$/;
const WHITESPACE = /\s/;
const WHITESPACE_RUN = /\s+/;

/**
 * A camelCase / PascalCase identifier: `authData1`, `ArrowToken$1`, `OAuth2Client`,
 * `Uint8Array`, `base64EncodedKey`. It has a hump, every word with lower-case letters has at
 * least 3 characters, and it holds at most 2 digits.
 */
function isCamelCaseIdentifier(value: string): boolean {
  if (value.length > MAX_IDENTIFIER_LENGTH) return false;
  if (!IDENTIFIER_CHARS.test(value) || !CAMEL_HUMP.test(value)) return false;
  if ((value.match(DIGITS) ?? []).length > 2) return false;
  const words = value.match(IDENTIFIER_WORD) ?? [];
  return words.every((word) => word.length >= 3 || !LOWER.test(word));
}

/**
 * A run of 16+ letters and digits mixing lower case, upper case and digits that changes class
 * often: generated, not written (`hvs.CAESI…`, `abc.Xy7Qm2…`), so the value is no member chain.
 */
function hasGeneratedRun(value: string): boolean {
  let start = 0;
  for (let index = 0; index <= value.length; index += 1) {
    const code = index < value.length ? value.charCodeAt(index) : 0;
    if (charClass(code) !== 3) continue;
    if (index - start >= 16) {
      const run = value.slice(start, index);
      if (
        UPPER.test(run) &&
        LOWER.test(run) &&
        DIGIT.test(run) &&
        classSwitchRatio(run) >= 0.3 &&
        wordShare(run) < 0.5
      ) {
        return true;
      }
    }
    start = index + 1;
  }
  return false;
}

function isCode(value: string): boolean {
  if (hasGeneratedRun(value)) return false;
  return (
    STARTS_LIKE_CODE.test(value) ||
    CODE_FRAGMENT.test(value) ||
    MEMBER_CHAIN.test(value) ||
    CALL_OR_INDEX.test(value) ||
    isCamelCaseIdentifier(value)
  );
}

const LEADING_SIGILS = '!?@#:*_~';
const TRAILING_PUNCTUATION = '.,:;!?*_~';

/**
 * The value without leading sigils (`!isValid`, `?Name`) and trailing punctuation
 * (`kerberos:`, `**SHOULD**`), for the word and identifier checks. A loop, not a regex: an
 * anchored-at-the-end regex such as `/[.]+$/` retries at every offset of a long run.
 */
function stripDecoration(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && LEADING_SIGILS.includes(value[start])) start += 1;
  while (end > start && TRAILING_PUNCTUATION.includes(value[end - 1])) end -= 1;
  return value.slice(start, end);
}

/** Most words are plain words, file names or numbers. */
function looksLikeProse(value: string): boolean {
  const words = value.trim().split(WHITESPACE_RUN);
  const plain = words.filter((word) => PROSE_WORD.test(word)).length;
  return plain * 2 > words.length;
}

/**
 * Whether a value explicitly assigned to a secret name is a secret (see the decisions above).
 * `minLength` lowers the bar for contexts that are unambiguous on their own.
 */
export function looksLikeSecretValue(raw: string, minLength = MIN_SECRET_LENGTH): boolean {
  const value = raw.trim();
  if (value.length < minLength) return false;
  if (containsRedactionMarker(value)) return false;
  if (isPlaceholder(value)) return false;
  if (NON_ASCII.test(value)) return false;
  if (URL_PATTERN.test(value)) return false;
  // A path, unless a segment is generated: about 1 in 64 AWS secrets starts with `/`
  // (`AWS_SECRET_ACCESS_KEY=/GU9W…`), and so do some Azure keys.
  if (PATH_PATTERNS.some((pattern) => pattern.test(value)) && !hasGeneratedRun(value)) return false;
  if (WHITESPACE.test(value)) return !isCode(value) && !looksLikeProse(value);
  const core = stripDecoration(value);
  if (core.length === 0) return false;
  if (isCode(value) || isCode(core)) return false;
  if (LETTERS_ONLY.test(core) || JOINED_WORDS.test(core)) return false;
  return true;
}

/** Shannon entropy in bits per character. */
export function shannonEntropy(value: string): number {
  if (value.length === 0) return 0;
  const counts = new Map<string, number>();
  for (const char of value) counts.set(char, (counts.get(char) ?? 0) + 1);
  let length = 0;
  for (const count of counts.values()) length += count;
  let bits = 0;
  for (const count of counts.values()) {
    const p = count / length;
    bits -= p * Math.log2(p);
  }
  return bits;
}

function charClass(code: number): number {
  if (code >= 97 && code <= 122) return 0; // a-z
  if (code >= 65 && code <= 90) return 1; // A-Z
  if (code >= 48 && code <= 57) return 2; // 0-9
  return 3;
}

const WORD_LIKE = /[A-Z]?[a-z]{3,}|[A-Z]{4,}/g;

/**
 * Share of the characters that sit in word-like runs of 4+ letters (`user`, `Profile`, `HTTP`).
 * Written identifiers are mostly words; generated tokens seldom hold four letters of one case.
 */
function wordShare(value: string): number {
  let inWords = 0;
  for (const match of value.matchAll(WORD_LIKE)) {
    if (match[0].length >= 4) inWords += match[0].length;
  }
  return inWords / Math.max(1, value.length);
}

/** Share of adjacent characters whose class (lower, upper, digit, other) differs. */
function classSwitchRatio(value: string): number {
  let switches = 0;
  for (let index = 1; index < value.length; index += 1) {
    if (charClass(value.charCodeAt(index)) !== charClass(value.charCodeAt(index - 1))) {
      switches += 1;
    }
  }
  return switches / Math.max(1, value.length - 1);
}

const TOKEN_CHARSET = /^[A-Za-z0-9+/=_-]+$/;
const HEX = /^[0-9a-fA-F]+$/;
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
/** 40 hex digits: a git SHA-1 or a PGP fingerprint, public either way. */
const SHA1_HEX = /^[0-9a-fA-F]{40}$/;
const LETTER = /[A-Za-z]/;

/**
 * Whether a value looks machine-generated, for names that are only key-like (`STRIPE_KEY`,
 * `key`): 16 to 4096 characters of a token alphabet, letters and digits mixed, high entropy
 * (≥ 3.0 bits/char for hex, ≥ 3.5 otherwise), frequent changes between lower case, upper
 * case and digits, and less than half of it in words of 4+ letters, so `created_at_desc` or
 * `user_profile_settings_v2` are not. UUIDs and 40-hex SHAs are identifiers.
 */
export function looksHighEntropy(raw: string): boolean {
  const value = raw.trim();
  if (value.length < 16 || value.length > 4096) return false;
  if (!TOKEN_CHARSET.test(value) || UUID.test(value) || SHA1_HEX.test(value)) return false;
  if (!DIGIT.test(value) || !LETTER.test(value)) return false;
  if (isPlaceholder(value)) return false;
  const minimumEntropy = HEX.test(value) ? 3 : 3.5;
  return (
    shannonEntropy(value) >= minimumEntropy &&
    classSwitchRatio(value) >= 0.3 &&
    wordShare(value) < 0.5
  );
}

const AWS_SECRET_CHARSET = /^[A-Za-z0-9+/]{40}$/;

/**
 * A bare AWS secret access key in prose (no name before it): exactly 40 characters of base64
 * (letters, digits, `+`, `/`) mixing upper case, lower case and digits, and generated-looking
 * (looksHighEntropy). A git SHA (40 hex digits, one case) and a 40-character path of words
 * (`apps/retrieval/src/RecallService2/module`) are not.
 */
export function looksLikeAwsSecretKey(value: string): boolean {
  if (!AWS_SECRET_CHARSET.test(value)) return false;
  if (!UPPER.test(value) || !LOWER.test(value) || !DIGIT.test(value)) return false;
  return looksHighEntropy(value);
}
