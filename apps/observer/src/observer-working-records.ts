import {
  newScratchpad,
  newSeenEvents,
  scratchpadIdOf,
  SeenEvents,
  SessionSignalDetector,
} from '@engram/core';
import type { ObserverCommittedState } from './observer-committed-state';
import {
  decodeRecord,
  endedSessionKey,
  scratchpadKey,
  sessionKey,
  type EndedSessionRecord,
  type ObserverRecord,
  type SessionRecord,
} from './observer-records';
import type { ObserverStageOptions } from './observer-stage-options';
import type { Work, WorkingEnded, WorkingPad, WorkingSession } from './observer-work';
import { emptyFacts, noChanges } from './session-facts';

/**
 * A transaction's working copies of the observer's records (sessions, ended sessions'
 * records, scratchpads): from the transaction, decoded from the committed bytes, or new.
 */
export class ObserverWorkingRecords {
  constructor(
    private readonly state: ObserverCommittedState,
    private readonly options: ObserverStageOptions,
  ) {}

  /** The session's working copy: from this transaction, the committed bytes, or new. */
  sessionOf(
    work: Work,
    event: { tenantId: string; projectId: string; sessionId: string; agentId: string },
    partition: number,
  ): WorkingSession {
    const existing = this.loadSession(work, event.sessionId, partition);
    if (existing) return existing;
    const record: SessionRecord = {
      v: 1,
      kind: 'session',
      sessionId: event.sessionId,
      partition,
      tenantId: event.tenantId,
      projectId: event.projectId,
      agentId: event.agentId,
      startedAt: null,
      lastActivityAt: 0,
      endedAt: null,
      detector: null as never,
      facts: emptyFacts(),
      pending: [],
      scratchpadId: scratchpadIdOf(event, null),
      seen: newSeenEvents(),
    };
    const detector = SessionSignalDetector.start(
      event,
      this.projectRoot(record),
      this.options.settings,
    );
    record.detector = detector.snapshot();
    const session: WorkingSession = {
      record,
      detector,
      seen: SeenEvents.of(record.seen!, this.options.settings),
      changes: noChanges(),
      changed: true,
      ended: false,
    };
    work.sessions.set(event.sessionId, session);
    return session;
  }

  loadSession(work: Work, sessionId: string, partition: number): WorkingSession | null {
    const working = work.sessions.get(sessionId);
    if (working) return working;
    const bytes = this.state.committedRecords.get(partition, sessionKey(sessionId));
    if (!bytes) return null;
    const record = decodeRecord(bytes) as SessionRecord;
    // A record from before `seen` existed: the detector's recent calls are what it knows.
    record.seen ??= {
      ids: [...record.detector.recentEventIds],
      times: record.detector.recentEventIds.map(() => record.lastActivityAt),
      droppedThrough: null,
    };
    const session: WorkingSession = {
      record,
      detector: SessionSignalDetector.restore(record.detector, this.options.settings),
      seen: SeenEvents.of(record.seen, this.options.settings),
      changes: noChanges(),
      changed: false,
      ended: false,
    };
    work.sessions.set(sessionId, session);
    return session;
  }

  /** The ended session's record: from this transaction, the committed bytes, or null. */
  loadEnded(work: Work, sessionId: string, partition: number): WorkingEnded | null {
    const working = work.ended.get(sessionId);
    if (working !== undefined) return working;
    const bytes = this.state.committedRecords.get(partition, endedSessionKey(sessionId));
    let ended: WorkingEnded | null = null;
    if (bytes) {
      const record = decodeRecord(bytes) as EndedSessionRecord;
      ended = {
        record,
        seen: SeenEvents.of(record.seen, this.options.settings),
        changed: false,
        removed: false,
      };
    }
    work.ended.set(sessionId, ended);
    return ended;
  }

  /**
   * The session's run is over and its state goes: its event ids join the session's ended record
   * (created, or extended for a resumed session), kept for `endedSessionRetentionMs`.
   */
  keepEnded(work: Work, session: WorkingSession): void {
    const { record } = session;
    let ended = this.loadEnded(work, record.sessionId, record.partition);
    if (!ended || ended.removed) {
      const fresh: EndedSessionRecord = {
        v: 1,
        kind: 'ended',
        sessionId: record.sessionId,
        partition: record.partition,
        tenantId: record.tenantId,
        projectId: record.projectId,
        lastActivityAt: record.lastActivityAt,
        endedAt: record.endedAt,
        seen: newSeenEvents(),
      };
      ended = {
        record: fresh,
        seen: SeenEvents.of(fresh.seen, this.options.settings),
        changed: true,
        removed: false,
      };
      work.ended.set(record.sessionId, ended);
    }
    ended.seen.addAll(record.seen!);
    ended.record.lastActivityAt = Math.max(ended.record.lastActivityAt, record.lastActivityAt);
    ended.record.endedAt = record.endedAt ?? ended.record.endedAt;
    ended.changed = true;
  }

  padOf(work: Work, session: WorkingSession): WorkingPad {
    const { record } = session;
    const working = work.pads.get(record.scratchpadId);
    if (working) return working;
    const bytes = this.state.committedRecords.get(
      record.partition,
      scratchpadKey(record.scratchpadId),
    );
    const pad: WorkingPad = {
      partition: record.partition,
      pad: bytes
        ? (decodeRecord(bytes) as Extract<ObserverRecord, { kind: 'scratchpad' }>).pad
        : newScratchpad({ ...record, timestamp: record.lastActivityAt }, null),
      changed: !bytes,
      removed: false,
    };
    work.pads.set(record.scratchpadId, pad);
    return pad;
  }

  projectRoot(record: { tenantId: string; projectId: string }): string | null {
    return this.options.projectRootOf?.(record.tenantId, record.projectId) ?? null;
  }
}
