/**
 * What a redaction removed. The kind names the `[REDACTED:<kind>]` marker that replaces the
 * secret; a finding never carries the secret itself.
 */
export const REDACTION_KINDS = [
  // Token formats recognised by their shape alone.
  'aws-access-key-id',
  'github-token',
  'gitlab-token',
  'slack-token',
  'slack-webhook',
  'stripe-key',
  'openai-key',
  'anthropic-key',
  'google-api-key',
  'npm-token',
  'vault-token',
  'jwt',
  'private-key',
  // Recognised by their context.
  'url-password',
  'bearer-token',
  'basic-auth',
  'authorization',
  'aws-secret-access-key',
  'password',
  'secret',
  'token',
  'api-key',
  'credential',
  'high-entropy-key',
] as const;

export type RedactionKind = (typeof REDACTION_KINDS)[number];

export interface RedactionFinding {
  kind: RedactionKind;
  /** Offset of the first redacted character in the ORIGINAL text (UTF-16 code units). */
  start: number;
  /** Offset just past the last redacted character in the original text. */
  end: number;
}

export interface RedactionResult {
  /** The text with every finding replaced by its marker; the input itself when nothing was found. */
  text: string;
  /** Ordered by position, never overlapping. */
  findings: RedactionFinding[];
}

export interface JsonRedactionResult {
  /** A redacted copy (the input is not modified). */
  value: unknown;
  /** How many secrets were removed: text findings plus values of secret-named keys. */
  findingCount: number;
}

export interface JsonTextRedactionResult {
  text: string;
  findingCount: number;
}

/** The text that replaces a secret of this kind. */
export function redactionMarker(kind: RedactionKind): string {
  return `[REDACTED:${kind}]`;
}

/** A marker produced by this module (any kind name, so older markers are recognised too). */
const MARKER_SOURCE = String.raw`\[REDACTED:[a-z0-9-]{1,40}\]`;
const MARKER_ANYWHERE = new RegExp(MARKER_SOURCE);
const MARKER_EXACT = new RegExp(`^${MARKER_SOURCE}$`);

/** True when the string contains a redaction marker. */
export function containsRedactionMarker(value: string): boolean {
  return value.includes('[REDACTED:') && MARKER_ANYWHERE.test(value);
}

/** True when the whole string is exactly one redaction marker. */
export function isRedactionMarker(value: string): boolean {
  return MARKER_EXACT.test(value);
}

/** Spans of the markers already in a text, in order: nothing inside them is redacted again. */
export function redactionMarkerSpans(text: string): Array<{ start: number; end: number }> {
  const spans: Array<{ start: number; end: number }> = [];
  if (!text.includes('[REDACTED:')) return spans;
  for (const match of text.matchAll(new RegExp(MARKER_SOURCE, 'g'))) {
    spans.push({ start: match.index, end: match.index + match[0].length });
  }
  return spans;
}
