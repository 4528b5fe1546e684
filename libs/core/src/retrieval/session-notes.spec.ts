import { describe, expect, it } from 'vitest';
import { observedMemoryId } from '../observation/promotion/memory-builder';
import { rememberRequestRule } from '../observation/rules/remember-request.rule';
import { inferenceInput, T0 } from '../observation/testing/observer-fixtures';
import { secretCorpus } from '../redaction/secret-corpus';
import { modelVector } from './model-vector';
import { DEFAULT_RANKING_CONFIG } from './ranking-config';
import { parseRememberRequest, rememberRequestedEvent, type RememberInput } from './remember';
import {
  isSessionNote,
  notesAwaitingValidation,
  rankSessionNotes,
  SESSION_NOTE_PREFIX,
  sessionNoteOf,
  type RankSessionNotesInput,
} from './session-notes';
import type { SessionNote } from './session-note-pad';
import { MODEL, NOW, SCOPE } from './testing/fixtures';

const AGENT_NOTE: RememberInput = {
  ...SCOPE,
  sessionId: 's-1',
  agentId: 'claude-code',
  text: 'Never call refresh() twice: it revokes the session',
};

function noteOf(input: Partial<RememberInput> = {}, vector: number[] | null = null): SessionNote {
  const request = parseRememberRequest({ ...AGENT_NOTE, ...input });
  const note = sessionNoteOf(
    request,
    rememberRequestedEvent(request, NOW),
    vector ? modelVector(MODEL, vector) : null,
  );
  if (!note) throw new Error('expected a session note');
  return note;
}

function rank(notes: SessionNote[], overrides: Partial<RankSessionNotesInput> = {}) {
  return rankSessionNotes(
    {
      notes,
      query: 'refresh revokes session',
      vector: null,
      filter: { ...SCOPE },
      phase: 'implement',
      now: NOW,
      minSimilarity: 0.2,
      ...overrides,
    },
    DEFAULT_RANKING_CONFIG,
  );
}

describe('sessionNoteOf', () => {
  it("should hold an agent's note for its own session, marked and redacted", () => {
    const secret = secretCorpus()[0];
    const note = noteOf({ text: `never log it: ${secret.text}` });
    expect(note.scope).toEqual(SCOPE);
    expect(note.sessionId).toBe('s-1');
    expect(isSessionNote(note.memory)).toBe(true);
    expect(note.memory).toMatchObject({
      scope: 'session',
      source: 'agent_explicit',
      userVerified: false,
    });
    expect(note.memory.content).toContain('[REDACTED:');
    expect(note.memory.content).not.toContain(secret.secret);
  });

  it('should give the note the id the observer gives its validated memory', () => {
    const note = noteOf();
    const [candidate] = rememberRequestRule(
      inferenceInput({
        notes: [
          {
            eventId: 'e-1',
            sessionId: 's-1',
            at: T0,
            text: AGENT_NOTE.text,
            memoryType: null,
            relatedFiles: [],
          },
        ],
      }),
    );
    expect(note.memory.memoryId).toBe(observedMemoryId(SCOPE.tenantId, SCOPE.projectId, candidate));
  });

  it("should make no note of a person's teaching, nor of a note without a session", () => {
    const taught = parseRememberRequest({
      ...SCOPE,
      userId: 'alice',
      text: 'Never deploy on Fridays',
    });
    expect(sessionNoteOf(taught, rememberRequestedEvent(taught, NOW), null)).toBeNull();
    const sessionless = parseRememberRequest({ ...AGENT_NOTE, sessionId: undefined });
    expect(sessionNoteOf(sessionless, rememberRequestedEvent(sessionless, NOW), null)).toBeNull();
    const withUser = parseRememberRequest({ ...AGENT_NOTE, sessionId: '', userId: 'bob' });
    expect(sessionNoteOf(withUser, rememberRequestedEvent(withUser, NOW), null)).toBeNull();
  });
});

describe('rankSessionNotes', () => {
  it('should return the notes that share a word with the query, prefixed as session notes', () => {
    const match = noteOf();
    const other = noteOf({ text: 'The build uses pnpm workspaces' });
    const ranked = rank([other, match]);
    expect(ranked.map((hit) => hit.memory.memoryId)).toEqual([match.memory.memoryId]);
    expect(ranked[0].content).toBe(`${SESSION_NOTE_PREFIX} ${AGENT_NOTE.text}`);
    expect(ranked[0].score.relevance).toBeGreaterThan(0);
  });

  it('should find a paraphrase by its embedding, and never compare another model', () => {
    const note = noteOf({ text: 'Token renewal must happen once' }, [1, 0, 0]);
    const query = { query: 'refresh revokes session', vector: modelVector(MODEL, [0.9, 0.1, 0]) };
    expect(rank([note], query).map((hit) => hit.memory.memoryId)).toEqual([note.memory.memoryId]);
    const otherModel = { ...query, vector: modelVector('another-model', [0.9, 0.1, 0]) };
    expect(rank([note], otherModel)).toEqual([]);
    const far = { ...query, vector: modelVector(MODEL, [0, 0, 1]) };
    expect(rank([note], far)).toEqual([]);
  });

  it("should apply the recall's filter (types, files)", () => {
    const gotcha = noteOf({ type: 'gotcha', relatedFiles: ['src/auth/refresh.ts'] });
    expect(rank([gotcha], { filter: { ...SCOPE, types: ['decision'] } })).toEqual([]);
    expect(rank([gotcha], { filter: { ...SCOPE, relatedFiles: ['src/other.ts'] } })).toEqual([]);
    expect(
      rank([gotcha], { filter: { ...SCOPE, relatedFiles: ['src/auth/refresh.ts'] } }),
    ).toHaveLength(1);
  });
});

describe('notesAwaitingValidation', () => {
  it('should drop the notes whose validated memory is indexed', () => {
    const a = noteOf();
    const b = noteOf({ text: 'The build uses pnpm workspaces' });
    expect(notesAwaitingValidation([a, b], new Set([a.memory.memoryId]))).toEqual([b]);
  });
});
