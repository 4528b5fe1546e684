import { redactSecrets } from './redact-secrets';
import { classifySecretName } from './secret-names';
import { looksHighEntropy } from './secret-values';
import {
  isRedactionMarker,
  redactionMarker,
  type JsonRedactionResult,
  type JsonTextRedactionResult,
  type RedactionKind,
} from './types';

/**
 * Deep redaction of a JSON value (tool arguments `argsJson`, tool results).
 *
 * - Every string (and every object key) goes through `redactSecrets`.
 * - A key whose name holds secrets (password, secret, token, apiKey, api_key, authorization,
 *   privateKey, client_secret, credentials, auth, … — see secret-names.ts, case-insensitive)
 *   has its whole value replaced by `[REDACTED:<kind>]` when that value is a non-empty string
 *   or a number; an array under such a key has each element treated the same way. An object
 *   under such a key is walked normally (its own keys decide): a JSON Schema such as
 *   `"password": {"type": "string", "minLength": 8}` keeps its shape. `null` and booleans stay.
 * - A merely key-like name (`key`, `STRIPE_KEY`) has its string value replaced only when it
 *   looks machine-generated.
 *
 * The input is not modified. Exact markers are left as they are, so the result is a fixed point.
 * The input must be a JSON value (no cycles); anything that is not JSON (Date, Map, class
 * instances) is returned as is.
 */
export function redactJson(value: unknown): JsonRedactionResult {
  const counter = { findings: 0 };
  const redacted = redactNode(value, null, counter);
  return { value: redacted, findingCount: counter.findings };
}

/**
 * `redactJson` for JSON text (e.g. `argsJson`): unchanged text when nothing was found (the
 * original formatting is kept), re-serialised otherwise. Text that is not valid JSON is
 * redacted as plain text.
 */
export function redactJsonText(json: string): JsonTextRedactionResult {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    const result = redactSecrets(json);
    return { text: result.text, findingCount: result.findings.length };
  }
  const result = redactJson(parsed);
  if (result.findingCount === 0) return { text: json, findingCount: 0 };
  return { text: JSON.stringify(result.value), findingCount: result.findingCount };
}

interface Counter {
  findings: number;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

function redactNode(node: unknown, secretKind: RedactionKind | null, counter: Counter): unknown {
  if (typeof node === 'string') {
    if (secretKind !== null) {
      if (node.length === 0 || isRedactionMarker(node)) return node;
      counter.findings += 1;
      return redactionMarker(secretKind);
    }
    const result = redactSecrets(node);
    counter.findings += result.findings.length;
    return result.text;
  }
  if (typeof node === 'number' || typeof node === 'bigint') {
    if (secretKind === null) return node;
    counter.findings += 1;
    return redactionMarker(secretKind);
  }
  if (Array.isArray(node)) {
    return node.map((element: unknown) => redactNode(element, secretKind, counter));
  }
  if (isPlainObject(node)) {
    // Object.fromEntries defines properties, so a "__proto__" key stays an ordinary key.
    return Object.fromEntries(
      Object.entries(node).map(([key, child]) => {
        const redactedKey = redactSecrets(key);
        counter.findings += redactedKey.findings.length;
        return [redactedKey.text, redactNode(child, childSecretKind(key, child), counter)];
      }),
    );
  }
  return node;
}

function childSecretKind(key: string, child: unknown): RedactionKind | null {
  const found = classifySecretName(key);
  if (found === null) return null;
  if (found.strength === 'secret') return found.kind;
  return typeof child === 'string' && looksHighEntropy(child) ? found.kind : null;
}
