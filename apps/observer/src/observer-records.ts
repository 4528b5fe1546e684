import { gunzipSync, gzipSync, constants as zlib } from 'node:zlib';
import type { LifecycleEvent } from '@engram/contracts';
import type { DetectorState, Scratchpad } from '@engram/core';
import type { SessionFacts } from './session-facts';

/**
 * A lifecycle event waiting for the session's tool calls, which travel on another topic and may
 * not have been processed yet: it takes effect, in order, once this group has consumed the
 * tool-calls partition up to the end offset it had when the lifecycle event was read.
 */
export interface PendingLifecycle {
  event: LifecycleEvent;
  untilToolCalls: number;
}

/** The changelog record of one session (key `session:<sessionId>`). */
export interface SessionRecord {
  v: 1;
  kind: 'session';
  sessionId: string;
  /** The input partition: the record is written to (and restored from) the same partition. */
  partition: number;
  tenantId: string;
  projectId: string;
  agentId: string;
  startedAt: number | null;
  lastActivityAt: number;
  endedAt: number | null;
  detector: DetectorState;
  facts: SessionFacts;
  pending: PendingLifecycle[];
  scratchpadId: string;
}

/** The changelog record of a scratchpad (key `scratchpad:<scratchpadId>`), core JSON as it is. */
export interface ScratchpadRecord {
  v: 1;
  kind: 'scratchpad';
  partition: number;
  pad: Scratchpad;
}

export type ObserverRecord = SessionRecord | ScratchpadRecord;

export const sessionKey = (sessionId: string) => `session:${sessionId}`;
export const scratchpadKey = (scratchpadId: string) => `scratchpad:${scratchpadId}`;

/**
 * Records above this size are gzipped: a long session's scratchpad (every signal until
 * validation) can pass the broker's 1 MB record limit as JSON, and compresses about tenfold.
 * Smaller records stay plain JSON, readable with any console consumer.
 */
export const COMPRESS_ABOVE_BYTES = 64 * 1024;
const GZIP_MAGIC = 0x1f;

/** JSON bytes, gzipped above COMPRESS_ABOVE_BYTES (JSON never starts with the gzip magic). */
export function encodeJson(value: unknown): Buffer {
  const json = Buffer.from(JSON.stringify(value), 'utf8');
  if (json.length <= COMPRESS_ABOVE_BYTES) return json;
  return gzipSync(json, { level: zlib.Z_BEST_SPEED });
}

export function decodeJson<T>(value: Buffer): T {
  const json = value[0] === GZIP_MAGIC ? gunzipSync(value) : value;
  return JSON.parse(json.toString('utf8')) as T;
}

export const encodeRecord = (record: ObserverRecord): Buffer => encodeJson(record);
export const decodeRecord = (value: Buffer): ObserverRecord => decodeJson<ObserverRecord>(value);
