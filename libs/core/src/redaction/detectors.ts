import { classifySecretName } from './secret-names';
import {
  isPlaceholder,
  looksHighEntropy,
  looksLikeAwsSecretKey,
  looksLikeSecretValue,
} from './secret-values';
import { containsRedactionMarker, type RedactionKind } from './types';

/**
 * The detectors. Each scans the whole text once and reports candidate spans; `redactSecrets`
 * merges them. Spans cover only the secret (the password of a URL, the value of an assignment,
 * the credential after `Bearer`), so the text around stays intact.
 *
 * Linear time. JavaScript regexes backtrack, so every pattern here is written so that a scan
 * cannot restart inside a run it has already covered:
 * - each pattern that starts with a character class is preceded by a negative lookbehind on
 *   that same class, so an attempt can only begin at the start of a run (`sk-sk-sk-…` or
 *   `aaaa…` is tried once, not at every offset);
 * - no nested quantifiers over overlapping classes; repetitions are separated by a character
 *   the repeated class cannot contain (`(?:\.[\w-]+)*`);
 * - values are read by hand after the pattern (`readValue`), stopping at the first stop
 *   character; a rejected unquoted value is skipped as a whole, and a rejected quoted value
 *   can only contain other candidates that end before its closing quote;
 * - PEM blocks are found with `indexOf`, each scan ending at the next `-----`.
 */

export interface SecretCandidate {
  kind: RedactionKind;
  start: number;
  end: number;
  /** Which detector wins when candidates overlap: the most specific one names the finding. */
  priority: number;
}

type Emit = (kind: RedactionKind, start: number, end: number, priority: number) => void;

const PRIORITY_PEM = 4;
const PRIORITY_TOKEN = 3;
const PRIORITY_CONTEXT = 2;
const PRIORITY_ASSIGNMENT = 1;
const PRIORITY_ENTROPY = 0;

// ---------------------------------------------------------------------------------------------
// Token formats recognised by their shape.

interface TokenPattern {
  pattern: RegExp;
  /** A fixed kind, or a function that names the kind or rejects the match (null). */
  kind: RedactionKind | ((token: string) => RedactionKind | null);
  /** The capture group holding the secret; the whole match when absent. */
  group?: number;
}

const UPPER = /[A-Z]/;
const LOWER = /[a-z]/;
const DIGIT = /\d/;

/**
 * `sk-…` is OpenAI (`sk-…`, `sk-proj-…`, `sk-svcacct-…`) or Anthropic (`sk-ant-…`). Real keys mix
 * upper case, lower case and digits; `sk-learn-tutorial-2024` does not.
 */
function skKeyKind(token: string): RedactionKind | null {
  const body = token.slice(3);
  if (!UPPER.test(body) || !LOWER.test(body) || !DIGIT.test(body)) return null;
  return body.startsWith('ant-') ? 'anthropic-key' : 'openai-key';
}

const TOKEN_PATTERNS: readonly TokenPattern[] = [
  {
    kind: 'aws-access-key-id',
    pattern: /(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])/g,
  },
  { kind: 'github-token', pattern: /(?<![A-Za-z0-9_])gh[pousr]_[A-Za-z0-9]{36,}/g },
  { kind: 'github-token', pattern: /(?<![A-Za-z0-9_])github_pat_[A-Za-z0-9_]{40,}/g },
  {
    kind: 'gitlab-token',
    pattern:
      /(?<![A-Za-z0-9_-])gl(?:pat|dt|rt|ptt|soat|cbt|ft)-[A-Za-z0-9_-]{20,}(?:\.[A-Za-z0-9_-]+)*/g,
  },
  { kind: 'slack-token', pattern: /(?<![A-Za-z0-9_-])(?:xox[abeprs]|xapp)-[A-Za-z0-9-]{10,}/g },
  {
    kind: 'slack-webhook',
    pattern: /hooks\.slack\.com\/services\/([A-Za-z0-9_/-]{20,})/g,
    group: 1,
  },
  { kind: 'stripe-key', pattern: /(?<![A-Za-z0-9_])(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}/g },
  { kind: 'stripe-key', pattern: /(?<![A-Za-z0-9_])whsec_[A-Za-z0-9]{24,}/g },
  { kind: skKeyKind, pattern: /(?<![A-Za-z0-9_-])sk-[A-Za-z0-9_-]{20,}/g },
  { kind: 'google-api-key', pattern: /(?<![A-Za-z0-9_-])AIza[A-Za-z0-9_-]{35,}/g },
  { kind: 'npm-token', pattern: /(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36,}/g },
  { kind: 'vault-token', pattern: /(?<![A-Za-z0-9_.-])hv[sbr]\.[A-Za-z0-9_-]{24,}/g },
  {
    // A bare AWS secret access key (40 base64 characters, no name before it): only when it
    // looks generated, so git SHAs and paths of words stay.
    kind: (token) => (looksLikeAwsSecretKey(token) ? 'aws-secret-access-key' : null),
    pattern: /(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{40}(?![A-Za-z0-9+/=])/g,
  },
  {
    kind: 'jwt',
    pattern: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{5,}\.ey[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g,
  },
];

function detectTokens(text: string, emit: Emit): void {
  for (const { pattern, kind, group } of TOKEN_PATTERNS) {
    pattern.lastIndex = 0;
    for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
      const secret = group === undefined ? match[0] : (match[group] ?? '');
      const start = match.index + match[0].length - secret.length;
      const found = typeof kind === 'function' ? kind(secret) : kind;
      if (found !== null && secret.length > 0) {
        emit(found, start, start + secret.length, PRIORITY_TOKEN);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// PEM private key blocks.

const PEM_BEGIN = /-----BEGIN (?:[A-Z0-9]+ ){0,3}PRIVATE KEY(?: BLOCK)?-----/g;
const PEM_END = /-----END (?:[A-Z0-9]+ ){0,3}PRIVATE KEY(?: BLOCK)?-----/y;
const DASHES = '-----';

/** Base64, whitespace, JSON `\n` escapes and the `Proc-Type: 4,ENCRYPTED` header lines. */
function isPemBodyChar(code: number): boolean {
  return (
    (code >= 65 && code <= 90) ||
    (code >= 97 && code <= 122) ||
    (code >= 48 && code <= 57) ||
    code === 43 || // +
    code === 47 || // /
    code === 61 || // =
    code === 32 ||
    code === 9 ||
    code === 10 ||
    code === 13 ||
    code === 92 || // backslash
    code === 58 || // :
    code === 44 || // ,
    code === 45 // -
  );
}

function isWhitespace(code: number): boolean {
  return code === 32 || code === 9 || code === 10 || code === 13;
}

const BASE64_RUN = /[A-Za-z0-9+/]{16}/;

/**
 * From BEGIN to the matching END when everything between is a PEM body. A block whose END is
 * missing (truncated output such as `head key.pem`) is redacted from BEGIN to the end of its
 * base64 body; a BEGIN line with no body (a regex, code that assembles a key) holds no secret.
 */
function detectPrivateKeys(text: string, emit: Emit): void {
  if (!text.includes('PRIVATE KEY')) return;
  PEM_BEGIN.lastIndex = 0;
  for (let match = PEM_BEGIN.exec(text); match !== null; match = PEM_BEGIN.exec(text)) {
    const start = match.index;
    const bodyStart = start + match[0].length;
    // Each scan ends at the next `-----`, where the next BEGIN or END starts: scans never overlap.
    const nextDashes = text.indexOf(DASHES, bodyStart);
    const limit = nextDashes === -1 ? text.length : nextDashes;
    let stop = bodyStart;
    while (stop < limit && isPemBodyChar(text.charCodeAt(stop))) stop += 1;
    if (stop === nextDashes) {
      PEM_END.lastIndex = nextDashes;
      const end = PEM_END.exec(text);
      if (end !== null) {
        const blockEnd = nextDashes + end[0].length;
        emit('private-key', start, blockEnd, PRIORITY_PEM);
        PEM_BEGIN.lastIndex = blockEnd;
        continue;
      }
    }
    while (stop > bodyStart && isWhitespace(text.charCodeAt(stop - 1))) stop -= 1;
    if (BASE64_RUN.test(text.slice(bodyStart, stop))) {
      emit('private-key', start, stop, PRIORITY_PEM);
    }
    PEM_BEGIN.lastIndex = Math.max(stop, bodyStart);
  }
}

// ---------------------------------------------------------------------------------------------
// Reading an assigned value.

interface ValueSpan {
  /** The value without its quotes. */
  start: number;
  end: number;
  quoted: boolean;
  /** Just past the value and its closing quote. */
  next: number;
}

const BACKSLASH = 92;
const LF = 10;
const CR = 13;

function isQuote(char: string | undefined): char is '"' | "'" | '`' {
  return char === '"' || char === "'" || char === '`';
}

/** Stops an unquoted value: whitespace, quotes, separators, closing brackets and `<`/`>`. */
function isUnquotedStop(code: number): boolean {
  return (
    code <= 32 || // whitespace and controls
    code === 34 || // "
    code === 39 || // '
    code === 96 || // `
    code === 44 || // ,
    code === 59 || // ;
    code === 38 || // &
    code === 41 || // )
    code === 93 || // ]
    code === 125 || // }
    code === 60 || // <
    code === 62 || // >
    code === 127
  );
}

/**
 * The value that starts at `position`: `"…"`, `'…'`, `` `…` `` (backslash escapes honoured, ending
 * at the line end when unterminated), `\"…\"` inside an escaped JSON string, or a bare value up
 * to the next stop character (a value starting with `<` reads through `>`, for `<your-key>`).
 */
function readValue(text: string, position: number): ValueSpan | null {
  if (position >= text.length) return null;
  const first = text[position];
  if (isQuote(first)) {
    const quote = first.charCodeAt(0);
    let index = position + 1;
    while (index < text.length) {
      const code = text.charCodeAt(index);
      if (code === quote || code === LF || code === CR) break;
      index += code === BACKSLASH ? 2 : 1;
    }
    const end = Math.min(index, text.length);
    const closed = end < text.length && text.charCodeAt(end) === quote;
    return { start: position + 1, end, quoted: true, next: closed ? end + 1 : end };
  }
  const second = text[position + 1];
  if (first === '\\' && isQuote(second)) {
    const quote = second.charCodeAt(0);
    let index = position + 2;
    while (index < text.length) {
      const code = text.charCodeAt(index);
      if (code === LF || code === CR) break;
      if (code === BACKSLASH) {
        if (text.charCodeAt(index + 1) === quote) break;
        index += 2;
        continue;
      }
      if (code === quote) break;
      index += 1;
    }
    const end = Math.min(index, text.length);
    const closed = text.charCodeAt(end) === BACKSLASH;
    return { start: position + 2, end, quoted: true, next: closed ? end + 2 : end };
  }
  let index = position;
  if (first === '<') {
    index += 1;
    while (index < text.length && text[index] !== '>' && !isUnquotedStop(text.charCodeAt(index))) {
      index += 1;
    }
    if (text[index] === '>') index += 1;
  }
  while (index < text.length && !isUnquotedStop(text.charCodeAt(index))) index += 1;
  let end = index;
  // A sentence's full stop is not part of the value.
  if (
    end > position + 1 &&
    text[end - 1] === '.' &&
    (end === text.length || text.charCodeAt(end) <= 32)
  ) {
    end -= 1;
  }
  if (end === position) return null;
  return { start: position, end, quoted: false, next: index };
}

function valueText(text: string, span: ValueSpan): string {
  return text.slice(span.start, span.end);
}

/** `password: str = "…"`, `apiKey: string = '…'`: skip a type annotation to the value. */
const TYPE_NAME = /^[A-Za-z_][A-Za-z0-9_.]*$/;

function skipTypeAnnotation(text: string, span: ValueSpan): ValueSpan | null {
  if (span.quoted || !TYPE_NAME.test(valueText(text, span))) return null;
  let index = span.next;
  while (text[index] === ' ' || text[index] === '\t') index += 1;
  if (text[index] !== '=' || text[index + 1] === '=' || text[index + 1] === '>') return null;
  index += 1;
  while (text[index] === ' ' || text[index] === '\t') index += 1;
  return readValue(text, index);
}

/**
 * Reads the value after a secret name and reports it when it qualifies. Returns where the
 * scan continues: past an accepted or rejected bare value, inside a rejected quoted one.
 */
function reportAssignedValue(
  text: string,
  position: number,
  kind: RedactionKind,
  strength: 'secret' | 'key-like',
  emit: Emit,
  options: { separator?: string; rejectFlags?: boolean } = {},
): number {
  let span = readValue(text, position);
  if (span === null) return position;
  if (options.separator === ':') span = skipTypeAnnotation(text, span) ?? span;
  const value = valueText(text, span);
  const accepted =
    !(options.rejectFlags === true && value.startsWith('-')) &&
    (strength === 'secret' ? looksLikeSecretValue(value) : looksHighEntropy(value));
  if (accepted) {
    const leading = value.length - value.trimStart().length;
    const trailing = value.length - value.trimEnd().length;
    emit(
      strength === 'secret' ? kind : 'high-entropy-key',
      span.start + leading,
      span.end - trailing,
      strength === 'secret' ? PRIORITY_ASSIGNMENT : PRIORITY_ENTROPY,
    );
    return span.next;
  }
  return span.quoted ? position : span.next;
}

// ---------------------------------------------------------------------------------------------
// Assignments: env files, shell, JSON, YAML, TOML, code, query strings.

/**
 * `NAME=value`, `export NAME=value`, `"name": "value"`, `name: value`, `name = 'value'`,
 * `name := value`, `'name' => 'value'`, `\"name\": \"value\"`. Authorization has its own
 * detector (its value has a scheme).
 */
const ASSIGNMENT =
  /(?<![A-Za-z0-9_.-])(\\?["']?)([A-Za-z_][A-Za-z0-9_.-]*)\1[ \t]*(:=|=>|=|:)[ \t]*/g;

function detectAssignments(text: string, emit: Emit): void {
  ASSIGNMENT.lastIndex = 0;
  for (let match = ASSIGNMENT.exec(text); match !== null; match = ASSIGNMENT.exec(text)) {
    const found = classifySecretName(match[2]);
    if (found === null || found.kind === 'authorization') continue;
    const position = match.index + match[0].length;
    // `'password:', password` and `prompt: 'Password: '`: the name is inside a string literal
    // and the "value" starts with its closing quote.
    const before = match.index > 0 ? text[match.index - 1] : '';
    if (match[1] === '' && isQuote(before) && text[position] === before) continue;
    ASSIGNMENT.lastIndex = reportAssignedValue(text, position, found.kind, found.strength, emit, {
      separator: match[3],
    });
  }
}

/** `--password foo`, `--api-key=foo`, `--client-secret "foo"` (single-dash flags are too ambiguous). */
const CLI_FLAG = /(?<![A-Za-z0-9_-])--([A-Za-z][A-Za-z0-9_.-]*)(?:=|[ \t]+)/g;

function detectCliFlags(text: string, emit: Emit): void {
  CLI_FLAG.lastIndex = 0;
  for (let match = CLI_FLAG.exec(text); match !== null; match = CLI_FLAG.exec(text)) {
    const found = classifySecretName(match[1]);
    if (found === null) continue;
    const position = match.index + match[0].length;
    CLI_FLAG.lastIndex = reportAssignedValue(text, position, found.kind, found.strength, emit, {
      rejectFlags: true,
    });
  }
}

/** `<password>…</password>` (Maven settings.xml, .NET configs). */
const XML_ELEMENT = /<([A-Za-z_][A-Za-z0-9_.:-]*)>([^<]*)<\/\1>/g;

function detectXmlElements(text: string, emit: Emit): void {
  if (!text.includes('</')) return;
  XML_ELEMENT.lastIndex = 0;
  for (let match = XML_ELEMENT.exec(text); match !== null; match = XML_ELEMENT.exec(text)) {
    const name = match[1].slice(match[1].lastIndexOf(':') + 1);
    const found = classifySecretName(name);
    if (found === null) continue;
    const value = match[2];
    const accepted =
      found.strength === 'secret' ? looksLikeSecretValue(value) : looksHighEntropy(value);
    if (!accepted) continue;
    const valueStart = match.index + match[1].length + 2;
    const leading = value.length - value.trimStart().length;
    const trailing = value.length - value.trimEnd().length;
    emit(
      found.strength === 'secret' ? found.kind : 'high-entropy-key',
      valueStart + leading,
      valueStart + value.length - trailing,
      found.strength === 'secret' ? PRIORITY_ASSIGNMENT : PRIORITY_ENTROPY,
    );
  }
}

/**
 * `password hunter22` (.netrc), `the password is Hunter2024!`, `WITH PASSWORD 'x'` (SQL). The
 * value must still look like a secret, so `password reset flow`, `password is required.` and
 * `password **SHOULD** be` stay.
 */
const PASSWORD_PHRASE = /(?<![A-Za-z0-9_.-])pass(?:word|wd|phrase)(?:[ \t]+(?:is|was))?[ \t]+/gi;
/** `CREATE USER … IDENTIFIED BY 'x'` (SQL): quoted values only, "identified by" is English too. */
const IDENTIFIED_BY = /(?<![A-Za-z0-9_])identified[ \t]+by[ \t]+(?=["'`])/gi;

function detectPasswordPhrases(text: string, emit: Emit): void {
  for (const pattern of [PASSWORD_PHRASE, IDENTIFIED_BY]) {
    pattern.lastIndex = 0;
    for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
      const position = match.index + match[0].length;
      const span = readValue(text, position);
      if (span === null) continue;
      const value = valueText(text, span);
      if (!value.startsWith('-') && looksLikeSecretValue(value)) {
        emit('password', span.start, span.end, PRIORITY_ASSIGNMENT);
        pattern.lastIndex = span.next;
      } else if (!span.quoted) {
        pattern.lastIndex = span.next;
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Credentials with their own syntax.

/**
 * `scheme://user:password@host` for any scheme; only the password is redacted. The password may
 * hold `#` and `?` (people paste them unencoded), not `/`, `@` or whitespace.
 */
const URL_CREDENTIALS =
  /(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s:@/?#"'`<>]*:([^\s@/"'`]+)@/g;

function detectUrlPasswords(text: string, emit: Emit): void {
  if (!text.includes('://')) return;
  URL_CREDENTIALS.lastIndex = 0;
  for (let match = URL_CREDENTIALS.exec(text); match !== null; match = URL_CREDENTIALS.exec(text)) {
    const password = match[1];
    if (isPlaceholder(password) || containsRedactionMarker(password)) continue;
    const end = match.index + match[0].length - 1;
    emit('url-password', end - password.length, end, PRIORITY_CONTEXT);
  }
}

/** `curl -u user:password`, `--user=user:password`: the part after the first colon. */
const USER_FLAG = /(?<![A-Za-z0-9_-])(?:-u|--user)(?:=|[ \t]+)/g;
const DIGITS_ONLY = /^\d+$/;

function detectUserFlags(text: string, emit: Emit): void {
  USER_FLAG.lastIndex = 0;
  for (let match = USER_FLAG.exec(text); match !== null; match = USER_FLAG.exec(text)) {
    const span = readValue(text, match.index + match[0].length);
    if (span === null) continue;
    const value = valueText(text, span);
    const colon = value.indexOf(':');
    if (colon > 0) {
      const password = value.slice(colon + 1);
      // `docker run -u 1000:1000` is a uid:gid.
      if (!DIGITS_ONLY.test(password) && looksLikeSecretValue(password, 6)) {
        emit('password', span.start + colon + 1, span.end, PRIORITY_CONTEXT);
      }
    }
    USER_FLAG.lastIndex = span.quoted ? match.index + match[0].length : span.next;
  }
}

const AUTH_SCHEMES = new Map<string, RedactionKind>([
  ['bearer', 'bearer-token'],
  ['basic', 'basic-auth'],
  ['token', 'authorization'],
  ['bot', 'authorization'],
  ['apikey', 'authorization'],
  ['key', 'authorization'],
  ['sso-key', 'authorization'],
  ['negotiate', 'authorization'],
  ['ntlm', 'authorization'],
]);

/** A credential inside a header: everything up to whitespace, a quote, `,` or `;`. */
function isCredentialStop(code: number): boolean {
  return code <= 32 || code === 34 || code === 39 || code === 96 || code === 44 || code === 59;
}

function readCredential(
  text: string,
  position: number,
): { start: number; end: number; next: number } {
  let end = position;
  while (end < text.length && !isCredentialStop(text.charCodeAt(end))) end += 1;
  const stop = end;
  // A sentence's full stop is not part of the credential.
  if (
    end > position + 1 &&
    text[end - 1] === '.' &&
    (end === text.length || text.charCodeAt(end) <= 32)
  ) {
    end -= 1;
  }
  return { start: position, end: Math.max(end, position), next: stop };
}

function acceptableCredential(value: string): boolean {
  return value.length >= 8 && !isPlaceholder(value) && !containsRedactionMarker(value);
}

/**
 * `Authorization: Bearer …`, `Authorization: Basic …`, `Authorization: token …`,
 * `"Authorization": "…"`, `Proxy-Authorization`. After a scheme any credential of 8+
 * characters goes (a Basic credential may be all letters); without one, the value must look
 * like a secret (`Authorization: required` stays).
 */
const AUTHORIZATION = /(?<![A-Za-z0-9_-])(?:proxy-)?authorization["']?[ \t]*[:=][ \t]*["']?/gi;
/** `Bearer …` without a header name (`--header "Bearer …"`, logs). */
const BEARER = /(?<![A-Za-z0-9_-])bearer[ \t]+/gi;
const SCHEME_SEPARATOR = /^[ \t]+/;

function detectAuthorization(text: string, emit: Emit): void {
  AUTHORIZATION.lastIndex = 0;
  for (let match = AUTHORIZATION.exec(text); match !== null; match = AUTHORIZATION.exec(text)) {
    const first = readCredential(text, match.index + match[0].length);
    const firstText = text.slice(first.start, first.end);
    const scheme = AUTH_SCHEMES.get(firstText.toLowerCase());
    const gap =
      scheme === undefined ? null : SCHEME_SEPARATOR.exec(text.slice(first.end, first.end + 16));
    if (scheme !== undefined && gap !== null) {
      const credential = readCredential(text, first.end + gap[0].length);
      if (acceptableCredential(text.slice(credential.start, credential.end))) {
        emit(scheme, credential.start, credential.end, PRIORITY_CONTEXT);
      }
      AUTHORIZATION.lastIndex = credential.next;
    } else {
      if (looksLikeSecretValue(firstText)) {
        emit('authorization', first.start, first.end, PRIORITY_CONTEXT);
      }
      AUTHORIZATION.lastIndex = Math.max(first.next, match.index + match[0].length);
    }
  }
  BEARER.lastIndex = 0;
  for (let match = BEARER.exec(text); match !== null; match = BEARER.exec(text)) {
    const credential = readCredential(text, match.index + match[0].length);
    if (looksLikeSecretValue(text.slice(credential.start, credential.end))) {
      emit('bearer-token', credential.start, credential.end, PRIORITY_CONTEXT);
    }
    BEARER.lastIndex = Math.max(credential.next, match.index + match[0].length);
  }
}

// ---------------------------------------------------------------------------------------------

const DETECTORS: ReadonlyArray<(text: string, emit: Emit) => void> = [
  detectPrivateKeys,
  detectTokens,
  detectUrlPasswords,
  detectAuthorization,
  detectUserFlags,
  detectAssignments,
  detectCliFlags,
  detectXmlElements,
  detectPasswordPhrases,
];

/** Every candidate span, unordered and possibly overlapping. */
export function detectSecretCandidates(text: string): SecretCandidate[] {
  const candidates: SecretCandidate[] = [];
  const emit: Emit = (kind, start, end, priority) => {
    if (end > start) candidates.push({ kind, start, end, priority });
  };
  for (const detect of DETECTORS) detect(text, emit);
  return candidates;
}
