import { SCHEMA_VERSION, type LifecycleEvent, type Typed } from '@engram/contracts';
import { describe, expect, it } from 'vitest';
import { modelVector, type ModelVector } from './model-vector';
import {
  parseRememberRequest,
  rememberRequestedEvent,
  type RememberInput,
  type RememberRequest,
} from './remember';
import { InMemorySessionNotes, DEFAULT_SESSION_NOTE_LIMITS } from './session-note-pad';
import { sessionNoteChangeOf, SessionNoteView, type EmbedNoteTexts } from './session-note-view';
import { sessionNoteOf } from './session-notes';
import { MODEL, NOW, SCOPE } from './testing/fixtures';

const DAY = DEFAULT_SESSION_NOTE_LIMITS.idleExpiryMs;

const NOTE: RememberInput = {
  ...SCOPE,
  sessionId: 's-1',
  agentId: 'claude-code',
  text: 'Never call refresh() twice: it revokes the session',
};

function remembered(
  input: Partial<RememberInput> = {},
  at = NOW,
): { request: RememberRequest; event: Typed<'RememberRequested'> } {
  const request = parseRememberRequest({ ...NOTE, ...input });
  return { request, event: rememberRequestedEvent(request, at) };
}

function ended(sessionId: string, at = NOW): Typed<'SessionEnded'> {
  return {
    type: 'SessionEnded',
    eventId: `${sessionId}:end`,
    ...SCOPE,
    sessionId,
    agentId: 'claude-code',
    userId: null,
    timestamp: at,
    schemaVersion: SCHEMA_VERSION,
    userMessageCount: 3,
    durationS: 60,
    reason: 'exit',
  };
}

function viewOn(options: { embed?: EmbedNoteTexts | null; now?: number } = {}) {
  const notes = new InMemorySessionNotes();
  const warnings: string[] = [];
  const embedded: string[][] = [];
  const embed =
    options.embed === undefined
      ? (texts: readonly string[]) => {
          embedded.push([...texts]);
          return Promise.resolve(texts.map((): ModelVector => modelVector(MODEL, [1, 0, 0])));
        }
      : options.embed;
  const clock = () => options.now ?? NOW + 1_000;
  const view = new SessionNoteView({
    notes,
    embed,
    idleExpiryMs: DAY,
    clock,
    warn: (message) => warnings.push(message),
  });
  const held = (sessionId = 's-1') => notes.notesOf(SCOPE, sessionId, clock());
  return { view, notes, warnings, embedded, held };
}

describe('sessionNoteChangeOf', () => {
  it('should hold an agent note of its own session, end at SessionEnded and ignore the rest', () => {
    const { event } = remembered();
    expect(sessionNoteChangeOf(event)).toMatchObject({ kind: 'hold', event });
    expect(sessionNoteChangeOf(ended('s-1'))).toEqual({
      kind: 'end',
      scope: SCOPE,
      sessionId: 's-1',
    });
    // A person's teaching is a memory at once; a note without a session has none to be held in.
    expect(sessionNoteChangeOf(remembered({ agentId: '', userId: 'dana' }).event).kind).toBe(
      'none',
    );
    expect(sessionNoteChangeOf(remembered({ sessionId: '', userId: 'dana' }).event).kind).toBe(
      'none',
    );
    const started = { ...ended('s-1'), type: 'SessionStarted' } as unknown as LifecycleEvent;
    expect(sessionNoteChangeOf(started).kind).toBe('none');
  });

  it('should refuse a RememberRequested no Remember could have published', () => {
    const { event } = remembered();
    expect(() => sessionNoteChangeOf({ ...event, text: '   ' })).toThrow(/text/);
    expect(() => sessionNoteChangeOf({ ...event, text: 'x'.repeat(4_001) })).toThrow(/text/);
    expect(() => sessionNoteChangeOf({ ...event, tenantId: '' })).toThrow(/tenantId/);
    expect(() => sessionNoteChangeOf({ ...event, relatedFiles: [''] })).toThrow(/relatedFiles/);
  });
});

describe('SessionNoteView', () => {
  it('should hold the note Remember held, with the same memory id, embedded', async () => {
    const { view, held } = viewOn();
    const { request, event } = remembered({ relatedFiles: ['src/auth.ts'], type: 'gotcha' });
    const counts = await view.apply([event]);
    expect(counts).toEqual({ held: 1, ended: 0, unchanged: 0, malformed: 0 });
    const [note] = held();
    expect(note.memory.memoryId).toBe(sessionNoteOf(request, event, null)!.memory.memoryId);
    expect(note.memory).toMatchObject({ content: NOTE.text, relatedFiles: ['src/auth.ts'] });
    expect(note.memory.embeddingModel).toBe(MODEL);
    expect(held('s-other')).toEqual([]);
  });

  it('should be idempotent: the same event twice, or a note Remember held, is one note, embedded once', async () => {
    const { view, notes, embedded, held } = viewOn();
    const first = remembered();
    const second = remembered({ text: 'The queue drains before deploys' });
    // Remember held this one itself (in process) before the view read its event.
    notes.add(sessionNoteOf(first.request, first.event, null)!, NOW);
    const counts = await view.apply([first.event, second.event, second.event]);
    expect(counts).toEqual({ held: 1, ended: 0, unchanged: 2, malformed: 0 });
    await view.apply([second.event]);
    expect(held().map((note) => note.memory.content)).toEqual([NOTE.text, second.request.text]);
    expect(embedded.flat()).toEqual([second.request.text, second.request.text]);
    // The note Remember held is left as it was (not replaced by an embedded copy).
    expect(held()[0].memory.embedding).toBeNull();
  });

  it('should end a session at its SessionEnded, in log order, and only that session', async () => {
    const { view, held } = viewOn();
    const other = remembered({ sessionId: 's-2' });
    const counts = await view.apply([remembered().event, other.event, ended('s-1')]);
    expect(counts).toEqual({ held: 2, ended: 1, unchanged: 0, malformed: 0 });
    expect(held('s-1')).toEqual([]);
    expect(held('s-2')).toHaveLength(1);
    // A Remember after the end (the agent went on) is held again.
    await view.apply([remembered({ text: 'After the end' }).event]);
    expect(held('s-1').map((note) => note.memory.content)).toEqual(['After the end']);
  });

  it('should pass over a malformed event with a warning and apply the rest of its batch', async () => {
    const { view, warnings, held } = viewOn();
    const bad = { ...remembered({ text: 'bad' }).event, eventId: 'e-bad', text: '' };
    const counts = await view.apply([bad, remembered().event]);
    expect(counts).toEqual({ held: 1, ended: 0, unchanged: 0, malformed: 1 });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('RememberRequested e-bad');
    expect(held()).toHaveLength(1);
  });

  it('should not hold a Remember older than the idle expiry, and expire a held one from its own time', async () => {
    const now = NOW + DAY;
    const { view, held, embedded, notes } = viewOn({ now });
    const old = remembered({ text: 'Too old' }, NOW - 1);
    const recent = remembered({ text: 'Recent enough' }, NOW + 10);
    const counts = await view.apply([old.event, recent.event]);
    expect(counts).toEqual({ held: 1, ended: 0, unchanged: 1, malformed: 0 });
    expect(embedded.flat()).toEqual(['Recent enough']);
    expect(held().map((note) => note.memory.content)).toEqual(['Recent enough']);
    // Read back a day later, it still expires a day after it was written.
    expect(notes.notesOf(SCOPE, 's-1', NOW + 10 + DAY + 1)).toEqual([]);
  });

  it('should hold notes lexical-only when embedding fails or there is no model', async () => {
    const failing = viewOn({ embed: () => Promise.reject(new Error('model gone')) });
    await failing.view.apply([remembered().event]);
    expect(failing.held()[0].memory.embedding).toBeNull();
    expect(failing.warnings.join('\n')).toContain('model gone');
    const none = viewOn({ embed: null });
    await none.view.apply([remembered().event]);
    expect(none.held()[0].memory.embedding).toBeNull();
  });
});
