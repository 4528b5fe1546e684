import { describe, expect, it } from 'vitest';
import { InMemorySessionNotes, type SessionNote, type SessionNoteLimits } from './session-note-pad';
import type { RecallScope } from './recall-scope';
import { memory, NOW, SCOPE } from './testing/fixtures';

const HOUR = 60 * 60 * 1000;

function note(id: string, sessionId = 's-1', scope: RecallScope = SCOPE): SessionNote {
  return { scope, sessionId, memory: memory({ memoryId: id }) };
}

/** A pad with small limits (an hour's idle expiry), so that the specs reach them. */
function padOf(limits: Partial<SessionNoteLimits>): InMemorySessionNotes {
  return new InMemorySessionNotes({
    maxNotesPerSession: 5,
    maxSessions: 10,
    idleExpiryMs: HOUR,
    ...limits,
  });
}

const ids = (notes: readonly SessionNote[]) => notes.map((n) => n.memory.memoryId);

describe('InMemorySessionNotes', () => {
  it("should give a session its own notes only, never another session's, project's or tenant's", () => {
    const pad = new InMemorySessionNotes();
    pad.add(note('m-1'), NOW);
    pad.add(note('m-2', 's-2'), NOW);
    pad.add(note('m-3', 's-1', { ...SCOPE, tenantId: 'tenant-b' }), NOW);
    pad.add(note('m-4', 's-1', { ...SCOPE, projectId: 'repo-b' }), NOW);
    expect(ids(pad.notesOf(SCOPE, 's-1', NOW))).toEqual(['m-1']);
    expect(ids(pad.notesOf(SCOPE, 's-2', NOW))).toEqual(['m-2']);
    expect(ids(pad.notesOf({ ...SCOPE, tenantId: 'tenant-b' }, 's-1', NOW))).toEqual(['m-3']);
    expect(pad.notesOf(SCOPE, 's-3', NOW)).toEqual([]);
  });

  it('should keep the newest notes of a session up to its cap, a repeated note once', () => {
    const pad = padOf({ maxNotesPerSession: 2, maxSessions: 10 });
    pad.add(note('m-1'), NOW);
    pad.add(note('m-2'), NOW + 1);
    pad.add(note('m-1'), NOW + 2);
    expect(ids(pad.notesOf(SCOPE, 's-1', NOW + 2))).toEqual(['m-2', 'm-1']);
    pad.add(note('m-3'), NOW + 3);
    expect(ids(pad.notesOf(SCOPE, 's-1', NOW + 3))).toEqual(['m-1', 'm-3']);
  });

  it('should drop the least recently written session beyond its session cap', () => {
    const pad = padOf({ maxNotesPerSession: 5, maxSessions: 2 });
    pad.add(note('m-1', 's-1'), NOW);
    pad.add(note('m-2', 's-2'), NOW + 1);
    pad.add(note('m-3', 's-1'), NOW + 2);
    pad.add(note('m-4', 's-3'), NOW + 3);
    expect(pad.sessionCount).toBe(2);
    expect(pad.notesOf(SCOPE, 's-2', NOW + 3)).toEqual([]);
    expect(ids(pad.notesOf(SCOPE, 's-1', NOW + 3))).toEqual(['m-1', 'm-3']);
  });

  it('should expire a session idle past the limit, and forget an ended one', () => {
    const pad = padOf({ maxNotesPerSession: 5, maxSessions: 10 });
    pad.add(note('m-1', 's-1'), NOW);
    pad.add(note('m-2', 's-2'), NOW);
    expect(ids(pad.notesOf(SCOPE, 's-1', NOW + HOUR))).toEqual(['m-1']);
    expect(pad.notesOf(SCOPE, 's-1', NOW + HOUR + 1)).toEqual([]);
    expect(pad.sessionCount).toBe(1);
    pad.endSession(SCOPE, 's-2');
    expect(pad.notesOf(SCOPE, 's-2', NOW)).toEqual([]);
  });

  it('should not rewind a session when an earlier note is read back from the log', () => {
    const pad = padOf({});
    pad.add(note('m-2'), NOW);
    // The view of the lifecycle log adds a note at its Remember's (earlier) time.
    pad.add(note('m-1'), NOW - HOUR / 2);
    expect(ids(pad.notesOf(SCOPE, 's-1', NOW + HOUR - 1))).toEqual(['m-2', 'm-1']);
    expect(pad.notesOf(SCOPE, 's-1', NOW + HOUR + 1)).toEqual([]);
  });

  it('should forget notes whose validated memory is indexed, and the session with its last', () => {
    const pad = new InMemorySessionNotes();
    pad.add(note('m-1'), NOW);
    pad.add(note('m-2'), NOW);
    pad.forget(SCOPE, 's-1', ['m-1']);
    expect(ids(pad.notesOf(SCOPE, 's-1', NOW))).toEqual(['m-2']);
    pad.forget(SCOPE, 's-1', ['m-2']);
    expect(pad.sessionCount).toBe(0);
  });
});
