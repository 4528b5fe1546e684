import { classifySecretName } from './secret-names';
import { isPlaceholder, looksHighEntropy, looksLikeSecretValue } from './secret-values';
import { containsRedactionMarker, type RedactionKind } from './types';
import { isQuote, readValue, reportAssignedValue, valueText } from './assigned-values';
import {
  PRIORITY_ASSIGNMENT,
  PRIORITY_CONTEXT,
  PRIORITY_ENTROPY,
  type Emit,
} from './detector-emit';
import { detectPrivateKeys, detectTokens } from './shape-detectors';

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
 *
 * Token formats and PEM blocks are in shape-detectors.ts, reading an assigned value in
 * assigned-values.ts; the detectors by context are here.
 */

export interface SecretCandidate {
  kind: RedactionKind;
  start: number;
  end: number;
  /** Which detector wins when candidates overlap: the most specific one names the finding. */
  priority: number;
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
