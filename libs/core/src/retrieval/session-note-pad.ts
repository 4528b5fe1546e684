import type { Memory } from '@engram/contracts';
import type { RecallScope } from './recall-scope';

/**
 * An agent's Remember, held for its own session until its work validates (seed 002 §8,
 * "Mid-Session Scratchpad Availability"): recallable there at once, nowhere else. Its memory has
 * the id the validated memory will have, so the two are never shown together.
 */
export interface SessionNote {
  scope: RecallScope;
  sessionId: string;
  /** The note as a memory (sessionNoteMemory): scope `session`, tagged `session_note`. */
  memory: Memory;
}

/**
 * Where session notes wait (a port; in process, filled by Remember and by the view of the
 * lifecycle log, SessionNoteView, which every recall server holds — so no store is shared).
 * Reads are synchronous and cheap: a recall asks on every request that names a session, and most
 * sessions have no notes.
 */
export interface SessionNoteStore {
  add(note: SessionNote, now: number): void;
  /** The session's notes, oldest first; empty when it has none (or they expired). */
  notesOf(scope: RecallScope, sessionId: string, now: number): readonly SessionNote[];
  /** Notes no longer needed: their validated memories are in the store. */
  forget(scope: RecallScope, sessionId: string, memoryIds: readonly string[]): void;
  /** The session ended: its notes go (validated ones live on as memories). */
  endSession(scope: RecallScope, sessionId: string): void;
}

export interface SessionNoteLimits {
  /** Beyond this, a session's oldest note makes room for the newest (the one the agent needs). */
  maxNotesPerSession: number;
  /** Sessions held at once; beyond this, the least recently written session is dropped. */
  maxSessions: number;
  /** A session with no new note for this long has ended as far as its notes go. */
  idleExpiryMs: number;
}

/**
 * Chosen: 50 notes is far more than an agent writes in a session (they are remember_this calls,
 * not tool calls); 10,000 sessions × 50 notes × ≤ 4,000 characters bounds the pad's memory; a
 * session idle for a day has ended (its SessionEnded may never reach the recall server).
 */
export const DEFAULT_SESSION_NOTE_LIMITS: SessionNoteLimits = Object.freeze({
  maxNotesPerSession: 50,
  maxSessions: 10_000,
  idleExpiryMs: 24 * 60 * 60 * 1000,
});

interface SessionEntry {
  notes: SessionNote[];
  lastWrittenAt: number;
}

/** The key of one session: tenant, project and session together (no note crosses any of them). */
function sessionKey(scope: RecallScope, sessionId: string): string {
  return JSON.stringify([scope.tenantId, scope.projectId, sessionId]);
}

/**
 * The session notes of one process, bounded in notes per session, in sessions and in time. A
 * Map in insertion order doubles as the recency list: a written session moves to the end, the
 * first one is the least recently written.
 */
export class InMemorySessionNotes implements SessionNoteStore {
  private readonly sessions = new Map<string, SessionEntry>();

  constructor(private readonly limits: SessionNoteLimits = DEFAULT_SESSION_NOTE_LIMITS) {
    if (!(limits.maxNotesPerSession >= 1) || !(limits.maxSessions >= 1)) {
      throw new RangeError('session notes need maxNotesPerSession ≥ 1 and maxSessions ≥ 1');
    }
  }

  /** Sessions held (expired ones included until they are next touched). */
  get sessionCount(): number {
    return this.sessions.size;
  }

  add(note: SessionNote, now: number): void {
    const key = sessionKey(note.scope, note.sessionId);
    const entry = this.live(key, now) ?? { notes: [], lastWrittenAt: now };
    this.sessions.delete(key);
    // The same note again (a retried Remember) replaces the earlier one, newest last.
    const notes = entry.notes.filter((kept) => kept.memory.memoryId !== note.memory.memoryId);
    notes.push(note);
    if (notes.length > this.limits.maxNotesPerSession) notes.shift();
    // A note read back from the log carries its own (earlier) time: it never rewinds the session.
    this.sessions.set(key, { notes, lastWrittenAt: Math.max(entry.lastWrittenAt, now) });
    while (this.sessions.size > this.limits.maxSessions) {
      this.sessions.delete(this.sessions.keys().next().value as string);
    }
  }

  notesOf(scope: RecallScope, sessionId: string, now: number): readonly SessionNote[] {
    return this.live(sessionKey(scope, sessionId), now)?.notes ?? [];
  }

  forget(scope: RecallScope, sessionId: string, memoryIds: readonly string[]): void {
    if (memoryIds.length === 0) return;
    const key = sessionKey(scope, sessionId);
    const entry = this.sessions.get(key);
    if (!entry) return;
    const gone = new Set(memoryIds);
    const notes = entry.notes.filter((note) => !gone.has(note.memory.memoryId));
    if (notes.length === 0) this.sessions.delete(key);
    else entry.notes = notes;
  }

  endSession(scope: RecallScope, sessionId: string): void {
    this.sessions.delete(sessionKey(scope, sessionId));
  }

  /** The session's entry unless it expired (an expired one is dropped on the way). */
  private live(key: string, now: number): SessionEntry | undefined {
    const entry = this.sessions.get(key);
    if (entry && now - entry.lastWrittenAt > this.limits.idleExpiryMs) {
      this.sessions.delete(key);
      return undefined;
    }
    return entry;
  }
}
