import {
  decodeStateJson,
  encodeStateJson,
  type DistillerSession,
  type TriggerKind,
} from '@engram/core';

/** The changelog record of an open session (key `session:<sessionId>`). */
export interface SessionRecord {
  kind: 'session';
  /** The input partition: the record is written to (and restored from) the same partition. */
  partition: number;
  session: DistillerSession;
}

/**
 * The changelog record of a distillation done (key `distilled:<dedupeKey>`): a redelivered or
 * replayed trigger with this key produces nothing. It outlives the session's state on purpose.
 */
export interface DistilledRecord {
  kind: 'distilled';
  partition: number;
  sessionId: string;
  trigger: TriggerKind;
  triggerEventId: string;
  /** The trigger's time: dedupe records older than the retention (stream time) are dropped. */
  at: number;
  memories: number;
}

export type DistillerRecord = SessionRecord | DistilledRecord;

export const sessionKey = (sessionId: string): string => `session:${sessionId}`;
export const distilledKey = (dedupeKey: string): string => `distilled:${dedupeKey}`;

export const encodeRecord = (record: DistillerRecord): Buffer => encodeStateJson(record);
export const decodeRecord = (value: Buffer): DistillerRecord =>
  decodeStateJson<DistillerRecord>(value);
