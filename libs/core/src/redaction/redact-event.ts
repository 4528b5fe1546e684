import { redactJsonText } from './redact-json';
import { redactSecrets } from './redact-secrets';
import { MIN_SECRET_LENGTH } from './secret-values';
import { capJsonText, capText, textCapOf } from './text-caps';

/** Fields that hold JSON text (tool arguments): redacted as JSON, secret-named keys included. */
const JSON_TEXT_FIELDS: ReadonlySet<string> = new Set(['argsJson']);

function redactString(key: string, value: string): string {
  const isJson = JSON_TEXT_FIELDS.has(key);
  const redact = (text: string): string => {
    // Shorter than any secret the detectors find (and ids, enums, names): nothing to scan.
    if (text.length < MIN_SECRET_LENGTH) return text;
    // (redactJsonText falls back to text when the value is not JSON after all.)
    return isJson ? redactJsonText(text).text : redactSecrets(text).text;
  };
  // Cut first (text-caps.ts), so the redaction and every stage after it does bounded work.
  const cap = textCapOf(key);
  if (cap === null) return redact(value);
  return isJson ? capJsonText(value, cap, redact) : capText(value, cap, redact);
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
 * an import) with every text field cut to its cap (text-caps.ts: the cut records how many
 * characters it removed) and redacted (SPEC §11), before it is published or dead-lettered:
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
