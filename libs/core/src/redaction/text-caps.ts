/**
 * Caps on event text at ingestion (issue #19, "bounded work per event"): every free-text field of
 * an event is cut to a fixed number of characters before it is redacted, published or stored, and
 * the cut says how much it removed (`…[N chars cut]`), so the original length stays on record in
 * the event itself. Every later stage then works on bounded text, whatever a producer sent.
 *
 * Why caps and not a wall-clock budget per record: a stage that dead-lettered records by elapsed
 * time would give different outputs for the same input on a slow or loaded machine, and observer
 * memories must be deterministic. Bounded input plus linear-time text functions (tested on 5 MB
 * adversarial shapes) bounds the work by construction instead.
 */

/** Characters kept of a field that is not in EVENT_TEXT_CAPS but holds a string. */
export const DEFAULT_TEXT_CAP = 16_384;

/**
 * Characters kept per field name. A prompt keeps enough for pasted code or logs (under the
 * segmenter's default maxPromptChars of 100,000, so a capped prompt is processed, not rejected);
 * tool arguments keep as much; commands, errors and notes keep less, as the stages only ever read
 * their first lines; one path is at most PATH_MAX.
 */
export const EVENT_TEXT_CAPS: Readonly<Record<string, number>> = Object.freeze({
  text: 65_536,
  argsJson: 65_536,
  command: 16_384,
  errorMessage: 16_384,
  message: 16_384,
  summary: 16_384,
  description: 16_384,
  whatWasTried: 16_384,
  recommendation: 16_384,
  taskDescription: 16_384,
  /** An MCP tool's result (e2e observations read the page, action and outcome in its head). */
  resultSummary: 4_096,
  reason: 4_096,
  filePaths: 4_096,
  changedFiles: 4_096,
  deletedFiles: 4_096,
  files: 4_096,
  from: 4_096,
  to: 4_096,
});

/** Ids and enums are never cut: cutting an id would change what the event refers to. */
const UNCAPPED_FIELDS: ReadonlySet<string> = new Set([
  'type',
  'eventId',
  'tenantId',
  'projectId',
  'sessionId',
  'agentId',
  'userId',
  'episodeId',
  'memoryId',
  'parentEpisodeId',
  'explicitThreadId',
]);

const CUT_MARKER = /…\[(\d+) chars cut\]$/;

/**
 * How far past the cut a text is redacted before it is cut: a secret that straddles the cut is
 * found whole (a PEM private key is about 3,300 characters) instead of leaving a fragment the
 * detectors no longer recognise.
 */
const REDACTION_OVERLAP = 4_096;

type Redact = (text: string) => string;

const unchanged: Redact = (text) => text;

/** The cap of a field, or null when the field is never cut. */
export function textCapOf(field: string): number | null {
  if (UNCAPPED_FIELDS.has(field)) return null;
  return EVENT_TEXT_CAPS[field] ?? DEFAULT_TEXT_CAP;
}

/** The characters a capped text lost (what its marker says), or 0 for text that was not cut. */
export function charsCut(text: string): number {
  const match = CUT_MARKER.exec(text.slice(-40));
  return match === null ? 0 : Number(match[1]);
}

/**
 * `text` cut to `max` characters with `…[N chars cut]` appended, or `text` itself when it fits;
 * `redact` (when given) runs on what is kept, and on a little more before the cut. Idempotent:
 * a text this function already cut to `max` (or less) is only redacted again, so an event capped
 * by the hook and again by a later entry keeps its original count. Never splits a surrogate pair.
 */
export function capText(text: string, max: number, redact: Redact = unchanged): string {
  if (text.length <= max || wasCut(text, max)) return redact(text);
  const head = redact(text.slice(0, max + REDACTION_OVERLAP));
  return `${headOf(head, max)}…[${text.length - max} chars cut]`;
}

/**
 * Tool arguments cut like capText but still JSON (consumers parse them):
 * `{"engramCut":{"originalChars":N},"head":"<first max characters>"}`. JSON that fits, or that
 * this function already cut, is only redacted.
 */
export function capJsonText(json: string, max: number, redact: Redact = unchanged): string {
  // A cut head is at most max characters, each escaped to at most 6: the bound keeps a producer
  // from skipping the cap by starting its own 5 MB value with the prefix.
  const alreadyCut = json.startsWith(CUT_JSON_PREFIX) && json.length <= max * 6 + 64;
  if (json.length <= max || alreadyCut) return redact(json);
  const head = headOf(redact(json.slice(0, max + REDACTION_OVERLAP)), max);
  return `${CUT_JSON_PREFIX}${json.length}},"head":${JSON.stringify(head)}}`;
}

const CUT_JSON_PREFIX = '{"engramCut":{"originalChars":';

function wasCut(text: string, max: number): boolean {
  const cut = charsCut(text);
  return cut > 0 && text.length - `…[${cut} chars cut]`.length <= max;
}

function headOf(text: string, max: number): string {
  if (text.length <= max) return text;
  const end = isHighSurrogate(text.charCodeAt(max - 1)) ? max - 1 : max;
  return text.slice(0, end);
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
