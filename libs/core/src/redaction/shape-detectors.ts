import { PRIORITY_PEM, PRIORITY_TOKEN, type Emit } from './detector-emit';
import { looksLikeAwsSecretKey } from './secret-values';
import type { RedactionKind } from './types';

// Detectors of secrets recognised by their shape alone (detectors.ts runs them with the others).

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

export function detectTokens(text: string, emit: Emit): void {
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
export function detectPrivateKeys(text: string, emit: Emit): void {
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
