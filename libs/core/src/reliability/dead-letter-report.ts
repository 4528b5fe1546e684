import { redactSecrets } from '../redaction';
import { DLQ_HEADERS, DLQ_SUFFIX } from './dead-letter';

// Dead letters as a person reads them (`engram dlq`, `engram replay --wait`): pure views over the
// records of the `<topic>.dlq` topics, whichever log they came from (SPEC §11 headers).

/** A record of a `<topic>.dlq` topic as a log returns it. */
export interface DeadLetterRecord {
  topic: string;
  partition: number;
  offset: number;
  key: string | null;
  value: string | Buffer | null;
  headers: Record<string, string | string[]>;
  /** Epoch ms the log stored it. */
  timestamp: number;
}

/** One dead letter's facts, from its headers. */
export interface DeadLetterView {
  /** `<dlq topic>:<partition>:<offset>` (what `engram dlq show|redrive` take). */
  id: string;
  topic: string;
  partition: number;
  offset: number;
  errorClass: string;
  message: string;
  sourceTopic: string | null;
  sourcePartition: number | null;
  /** A line number for `engram replay`'s rejected lines, else the source record's offset. */
  sourceOffset: string | null;
  service: string | null;
  /** ISO 8601: when it was dead-lettered (the header, else the log's timestamp). */
  time: string;
}

/** The service name on the dead letters of `engram replay` / `engram import`'s own bad lines. */
export const REPLAY_DEAD_LETTER_SERVICE = 'engram-replay';

export function isDeadLetterTopic(topic: string): boolean {
  return topic.endsWith(DLQ_SUFFIX);
}

export function deadLetterId(record: Pick<DeadLetterRecord, 'topic' | 'partition' | 'offset'>) {
  return `${record.topic}:${record.partition}:${record.offset}`;
}

/** `<dlq topic>:<partition>:<offset>` back into its parts, or null when it is not one. */
export function parseDeadLetterId(
  id: string,
): { topic: string; partition: number; offset: number } | null {
  const match = /^(.+\.dlq):(\d+):(\d+)$/.exec(id.trim());
  if (!match) return null;
  return { topic: match[1], partition: Number(match[2]), offset: Number(match[3]) };
}

function header(record: DeadLetterRecord, name: string): string | null {
  const value = record.headers[name];
  const text = Array.isArray(value) ? value[0] : value;
  return text === undefined || text === '' ? null : text;
}

export function deadLetterView(record: DeadLetterRecord): DeadLetterView {
  const partition = header(record, DLQ_HEADERS.sourcePartition);
  return {
    id: deadLetterId(record),
    topic: record.topic,
    partition: record.partition,
    offset: record.offset,
    errorClass: header(record, DLQ_HEADERS.errorClass) ?? 'unknown',
    message: header(record, DLQ_HEADERS.errorMessage) ?? '',
    sourceTopic: header(record, DLQ_HEADERS.sourceTopic),
    sourcePartition: partition !== null && /^\d+$/.test(partition) ? Number(partition) : null,
    sourceOffset: header(record, DLQ_HEADERS.sourceOffset),
    service: header(record, DLQ_HEADERS.service),
    time: header(record, DLQ_HEADERS.time) ?? new Date(record.timestamp).toISOString(),
  };
}

/** Dead letters counted per topic and reason (error class), most first. */
export interface DeadLetterCount {
  topic: string;
  errorClass: string;
  count: number;
  /** The first one's message, as an example of the reason. */
  example: string;
}

export function countDeadLetters(views: readonly DeadLetterView[]): DeadLetterCount[] {
  const counts = new Map<string, DeadLetterCount>();
  for (const view of views) {
    const key = `${view.topic}\u0000${view.errorClass}`;
    const entry = counts.get(key);
    if (entry) entry.count += 1;
    else {
      counts.set(key, {
        topic: view.topic,
        errorClass: view.errorClass,
        count: 1,
        example: view.message,
      });
    }
  }
  return [...counts.values()].sort((a, b) => b.count - a.count || a.topic.localeCompare(b.topic));
}

/** Longest payload `engram dlq show` prints. */
export const MAX_SHOWN_PAYLOAD_CHARS = 4_000;

/**
 * A dead letter's payload for a person's screen: as text (bytes that are not UTF-8 shown as
 * base64), secrets redacted (SPEC §11: a producer may have dead-lettered raw input), cut at
 * `max` characters with the original length said.
 */
export function shownPayload(
  value: string | Buffer | null,
  max = MAX_SHOWN_PAYLOAD_CHARS,
): { text: string | null; encoding: 'utf8' | 'base64'; length: number; truncated: boolean } {
  if (value === null) return { text: null, encoding: 'utf8', length: 0, truncated: false };
  let text: string;
  let encoding: 'utf8' | 'base64' = 'utf8';
  if (typeof value === 'string') text = value;
  else {
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(value);
    } catch {
      text = value.toString('base64');
      encoding = 'base64';
    }
  }
  const redacted = encoding === 'utf8' ? redactSecrets(text.slice(0, max * 2)).text : text;
  const truncated = redacted.length > max || text.length > max * 2;
  return {
    text: truncated ? `${redacted.slice(0, max)}…` : redacted,
    encoding,
    length: text.length,
    truncated,
  };
}
