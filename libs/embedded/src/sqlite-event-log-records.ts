import { EngramError, type RecordHeaders } from '@engram/core';

// The records of the embedded event log (sqlite-event-log.ts): as appended, as stored and read
// back, and the topics they belong to.

/** A record to append. Without `partition`, the key decides (partitionOfKey); no key: round robin. */
export interface AppendRecord {
  key?: string | Buffer | null;
  /** JSON text for typed events; raw bytes or text otherwise; null is a tombstone. */
  value: string | Buffer | null;
  headers?: RecordHeaders;
  partition?: number;
  /** Epoch millis; default: now. */
  timestamp?: number;
}

/** A record as stored. `value` comes back as it was written: text as a string, bytes as a Buffer. */
export interface LogRecord {
  topic: string;
  partition: number;
  offset: number;
  key: string | null;
  value: string | Buffer | null;
  headers: Record<string, string | string[]>;
  timestamp: number;
}

export interface AppendedAt {
  partition: number;
  offset: number;
}

export interface TopicInfo {
  name: string;
  partitions: number;
  compacted: boolean;
}

export interface EnsureTopicOptions {
  compacted?: boolean;
  /** Also create `<topic>.dlq` with one partition, as libs/kafka's ensureTopics does. */
  withDeadLetter?: boolean;
}

/** Appending to, or reading, a topic that was never created. */
export class UnknownTopicError extends EngramError {
  readonly code = 'UNKNOWN_TOPIC';
  readonly retriable = false;
}

export interface TopicRow {
  id: number;
  name: string;
  partitions: number;
  compacted: number;
}

/** What callers see of a topic's row. */
export function topicInfoOf(row: TopicRow): TopicInfo {
  return { name: row.name, partitions: row.partitions, compacted: row.compacted === 1 };
}

/** A read's range, checked before it reaches SQLite. */
export function requireReadRange(fromOffset: number, maxRecords: number): void {
  if (!Number.isInteger(fromOffset) || fromOffset < 0) {
    throw new RangeError(`offset must be a non-negative integer, got ${fromOffset}`);
  }
  if (!Number.isInteger(maxRecords) || maxRecords < 1) {
    throw new RangeError(`maxRecords must be a positive integer, got ${maxRecords}`);
  }
}

export interface RecordRow {
  offset: number;
  key: string | null;
  value: string | Buffer | null;
  headers: string | null;
  timestamp: number;
}

export function keyText(key: AppendRecord['key']): string | null {
  if (key === undefined || key === null) return null;
  return typeof key === 'string' ? key : key.toString('utf8');
}

/** Headers as JSON text; Buffer values become UTF-8 text, undefined values are dropped. */
export function headersJson(headers: RecordHeaders | undefined): string | null {
  if (!headers) return null;
  const text = (value: Buffer | string) => (typeof value === 'string' ? value : value.toString());
  const entries = Object.entries(headers).flatMap(([name, value]) => {
    if (value === undefined) return [];
    return [[name, Array.isArray(value) ? value.map(text) : text(value)]];
  });
  return entries.length === 0 ? null : JSON.stringify(Object.fromEntries(entries));
}

export function toLogRecord(topic: string, partition: number, row: RecordRow): LogRecord {
  return {
    topic,
    partition,
    offset: row.offset,
    key: row.key,
    value: row.value,
    headers: row.headers ? (JSON.parse(row.headers) as Record<string, string | string[]>) : {},
    timestamp: row.timestamp,
  };
}

export function asBuffer(value: string | Buffer): Buffer {
  return typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
}
