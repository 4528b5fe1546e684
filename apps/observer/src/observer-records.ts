import type { LifecycleEvent } from '@engram/contracts';
import {
  decodeStateJson,
  encodeStateJson,
  type DetectorState,
  type Scratchpad,
} from '@engram/core';
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

export const encodeRecord = (record: ObserverRecord): Buffer => encodeStateJson(record);
export const decodeRecord = (value: Buffer): ObserverRecord =>
  decodeStateJson<ObserverRecord>(value);
