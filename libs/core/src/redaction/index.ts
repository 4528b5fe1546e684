/**
 * Secret redaction (SPEC §11): prompts and tool calls lose their API keys, tokens, passwords,
 * private keys and connection-string passwords before anything is stored or published.
 *
 * - `redactSecrets(text)`: `[REDACTED:<kind>]` in place of each secret, findings with kinds and
 *   positions in the original text (never the secret).
 * - `redactJson(value)` / `redactJsonText(json)`: the same for tool arguments and results, plus
 *   whole values of secret-named keys.
 *
 * Pure (no I/O, no framework), idempotent and linear-time. Where each rule lives:
 * detectors.ts (what is found, and why the patterns cannot backtrack), secret-names.ts (which
 * names hold secrets), secret-values.ts (which values are secrets: the false-positive
 * decisions), redact-secrets.ts (merging, markers, fixed point), redact-json.ts.
 */
export {
  REDACTION_KINDS,
  containsRedactionMarker,
  isRedactionMarker,
  redactionMarker,
  type JsonRedactionResult,
  type JsonTextRedactionResult,
  type RedactionFinding,
  type RedactionKind,
  type RedactionResult,
} from './types';
export {
  classifySecretName,
  isSecretName,
  type SecretNameClass,
  type SecretNameStrength,
} from './secret-names';
export { MIN_SECRET_LENGTH, looksHighEntropy, looksLikeSecretValue } from './secret-values';
export { findSecrets, redactSecrets } from './redact-secrets';
export { redactJson, redactJsonText } from './redact-json';
export { redactEvent, redactRawLine } from './redact-event';
export {
  DEFAULT_TEXT_CAP,
  EVENT_TEXT_CAPS,
  capJsonText,
  capText,
  charsCut,
  textCapOf,
} from './text-caps';
