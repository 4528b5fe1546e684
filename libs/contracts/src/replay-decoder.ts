import { InvalidEventError } from '@engram/errors';
import { schemaIndexOfTopic } from './avro-schemas';
import { envelopeIssues } from './envelope';
import { CoercionError, coerceRecordFields, type CoercionOptions } from './json-coercion';
import {
  isRecordName,
  RECORD_NAMES,
  topicOfRecord,
  type RecordName,
  type TopicName,
  type Typed,
} from './topics';

/** One decoded line of a replay file (SPEC §12): the event, the topic and key its type decides. */
export interface ReplayEvent {
  /** 1-based line number in the input. */
  line: number;
  topic: TopicName;
  key: string;
  event: Typed;
}

export interface ReplayDecodeOptions extends CoercionOptions {
  /** The type of lines without `type` (`engram segment` reads PromptSubmitted without it). */
  defaultType?: RecordName;
}

/** A replay line that failed validation; names the line and, where it can, the field. */
export class ReplayLineError extends InvalidEventError {
  constructor(
    readonly line: number,
    readonly field: string | null,
    readonly recordType: string | null,
    readonly detail: string,
    /** The raw line, for the dead-letter topic. */
    readonly raw: string,
  ) {
    const where = [recordType, field].filter((part) => part).join('.');
    super(`line ${line}: ${where ? `${where}: ` : ''}${detail}`, { line, field, recordType });
  }
}

/**
 * Decodes one replay line: a JSON object whose `type` names an Avro record and whose other keys
 * are that record's fields. Throws ReplayLineError.
 */
export function decodeReplayLine(
  text: string,
  line: number,
  options: ReplayDecodeOptions = {},
): ReplayEvent {
  const fail = (field: string | null, type: string | null, detail: string): never => {
    throw new ReplayLineError(line, field, type, detail, text);
  };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return fail(null, null, `not valid JSON (${(error as Error).message})`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return fail(null, null, 'expected a JSON object');
  }
  const { type = options.defaultType, ...fields } = parsed as Record<string, unknown>;
  if (type === undefined) return fail('type', null, 'missing; it names the Avro record');
  if (!isRecordName(type)) {
    return fail(
      'type',
      null,
      `unknown record ${JSON.stringify(type)} (one of ${RECORD_NAMES.join(', ')})`,
    );
  }
  const spec = topicOfRecord(type);
  const index = schemaIndexOfTopic(spec.topic);
  let values: Record<string, unknown>;
  try {
    values = coerceRecordFields(index, index.record(type)!, fields, options);
  } catch (error) {
    if (!(error instanceof CoercionError)) throw error;
    return fail(error.path || null, type, error.detail);
  }
  const event = { type, ...values } as Typed;
  const issue = envelopeIssues(event)[0];
  if (issue) return fail(issue.field, type, issue.message);
  const key = values[spec.keyField];
  if (typeof key !== 'string' || key.trim() === '') return fail(spec.keyField, type, 'empty key');
  return { line, topic: spec.topic as TopicName, key, event };
}

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const UTF8_LOSSY = new TextDecoder('utf-8', { ignoreBOM: true });
const BOM = '\uFEFF';

/**
 * The text of one replay line from its bytes (without the newline). A UTF-8 byte order mark on
 * line 1 is dropped (editors on Windows write one); bytes that are not UTF-8 are an error naming
 * the line and the byte — never silently turned into U+FFFD. Throws ReplayLineError.
 */
export function decodeReplayLineBytes(bytes: Uint8Array, line: number): string {
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    const raw = UTF8_LOSSY.decode(bytes);
    throw new ReplayLineError(
      line,
      null,
      null,
      `not valid UTF-8 (first bad byte at column ${firstInvalidUtf8(bytes) + 1})`,
      raw,
    );
  }
  if (line === 1 && text.startsWith(BOM)) text = text.slice(1);
  return text.endsWith('\r') ? text.slice(0, -1) : text;
}

/** The index of the first byte that does not start or continue a valid UTF-8 sequence. */
function firstInvalidUtf8(bytes: Uint8Array): number {
  for (let i = 0; i < bytes.length;) {
    const b = bytes[i];
    const length = b < 0x80 ? 1 : b >= 0xc2 && b < 0xe0 ? 2 : b >= 0xe0 && b < 0xf0 ? 3 : 4;
    if (b >= 0xf5 || (b >= 0x80 && b < 0xc2)) return i;
    try {
      UTF8.decode(bytes.subarray(i, i + length));
    } catch {
      return i;
    }
    i += length;
  }
  return bytes.length;
}

/**
 * Decodes a whole replay file (JSON lines; blank lines are skipped). Bad lines never stop the
 * decoding: they come back in `errors`, in line order, for reporting and the dead-letter topic.
 */
export function decodeReplayLines(
  content: string,
  options: ReplayDecodeOptions = {},
): { events: ReplayEvent[]; errors: ReplayLineError[] } {
  const events: ReplayEvent[] = [];
  const errors: ReplayLineError[] = [];
  (content.startsWith(BOM) ? content.slice(1) : content).split(/\r?\n/).forEach((text, i) => {
    if (text.trim() === '') return;
    try {
      events.push(decodeReplayLine(text, i + 1, options));
    } catch (error) {
      if (!(error instanceof ReplayLineError)) throw error;
      errors.push(error);
    }
  });
  return { events, errors };
}
