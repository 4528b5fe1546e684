import type { LifecycleEvent } from '@engram/contracts';
import {
  decodeStateJson,
  encodeStateJson,
  type CommitFileChanges,
  type DetectorState,
  type Scratchpad,
  type SeenEventsState,
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
  /**
   * A FileManifest's sweep (issue #20): the memories' files it did not list, as deletions, or
   * null. The event itself waits without its files. Absent for other events.
   */
  fileChanges?: CommitFileChanges | null;
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
  /** The events applied to this run of the session (absent in records written before it). */
  seen?: SeenEventsState;
}

/**
 * The changelog record of a session that ended (key `ended:<sessionId>`): the ids of its events,
 * so that the same events published again are ignored, until `endedSessionRetentionMs` of stream
 * time after `lastActivityAt` (then a tombstone). A resumed session (new ids) runs as a new
 * session record beside it; when that run ends, its ids join this record.
 */
export interface EndedSessionRecord {
  v: 1;
  kind: 'ended';
  sessionId: string;
  partition: number;
  tenantId: string;
  projectId: string;
  /** The latest event time of the session's runs: the retention counts from it. */
  lastActivityAt: number;
  endedAt: number | null;
  seen: SeenEventsState;
}

/** The changelog record of a scratchpad (key `scratchpad:<scratchpadId>`), core JSON as it is. */
export interface ScratchpadRecord {
  v: 1;
  kind: 'scratchpad';
  partition: number;
  pad: Scratchpad;
}

export type ObserverRecord = SessionRecord | ScratchpadRecord | EndedSessionRecord;

export const sessionKey = (sessionId: string) => `session:${sessionId}`;
export const scratchpadKey = (scratchpadId: string) => `scratchpad:${scratchpadId}`;
export const endedSessionKey = (sessionId: string) => `ended:${sessionId}`;

export const encodeRecord = (record: ObserverRecord): Buffer => encodeStateJson(record);
export const decodeRecord = (value: Buffer): ObserverRecord =>
  decodeStateJson<ObserverRecord>(value);
