import { redactJsonText } from './redact-json';
import { redactSecrets } from './redact-secrets';
import { MIN_SECRET_LENGTH } from './secret-values';

/** Fields that hold JSON text (tool arguments): redacted as JSON, secret-named keys included. */
const JSON_TEXT_FIELDS: ReadonlySet<string> = new Set(['argsJson']);

function redactString(key: string, value: string): string {
  // Shorter than any secret the detectors find (and ids, enums, names): nothing to scan.
  if (value.length < MIN_SECRET_LENGTH) return value;
  // (redactJsonText falls back to text when the value is not JSON after all.)
  return JSON_TEXT_FIELDS.has(key) ? redactJsonText(value).text : redactSecrets(value).text;
}

function redactValue(key: string, value: unknown): unknown {
  if (typeof value === 'string') return redactString(key, value);
  if (Array.isArray(value)) {
    // Vectors and counters hold no text: only arrays with strings or objects are walked.
    if (value.every((item) => typeof item !== 'string' && typeof item !== 'object')) return value;
    return value.map((item) => redactValue(key, item));
  }
  if (value !== null && typeof value === 'object') return redactRecord(value);
  return value;
}

function redactRecord<T extends object>(record: T): T {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) {
    out[key] = key === 'type' ? value : redactValue(key, value);
  }
  return out as T;
}

/**
 * An event (any contract record, as a producer outside Engram's hooks wrote it: `engram replay`,
 * an import) with every text field redacted (SPEC §11), before it is published or dead-lettered:
 * strings through redactSecrets, `argsJson` through redactJsonText, nested records and string
 * arrays alike. Ids, enums, numbers and vectors come back unchanged; idempotent (what the hook
 * already redacted stays as it is). A copy: the input is not modified.
 */
export function redactEvent<T extends object>(event: T): T {
  return redactRecord(event);
}

/** A raw input line (JSON or not) redacted for a dead-letter topic. */
export function redactRawLine(raw: string): string {
  return redactJsonText(raw).text;
}
