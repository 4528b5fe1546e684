import type { LifecycleEvent, Typed } from '@engram/contracts';
import { errorMessage } from '../errors/engram-error';
import type { ModelVector } from './model-vector';
import type { RecallScope } from './recall-scope';
import { rememberRequestOf, type RememberRequest } from './remember';
import type { SessionNoteStore } from './session-note-pad';
import { sessionNoteOf } from './session-notes';

// The session notes as a view of agent.lifecycle.v1 (a GlobalKTable of it): every recall server
// reads the topic from (now − the notes' idle expiry) on, holds the note of every agent's
// Remember in a session and ends a session's notes at its SessionEnded. So a restarted server has
// its notes back, and replicas share them. Remember's own in-process hold stays: a note is
// recallable once Remember answered, before the view has read its event.

/** What one lifecycle event does to the session notes. */
export type SessionNoteChange =
  | { kind: 'hold'; request: RememberRequest; event: Typed<'RememberRequested'> }
  | { kind: 'end'; scope: RecallScope; sessionId: string }
  | { kind: 'none' };

/**
 * The change of one lifecycle event: an agent's Remember in a session of its own is held, a
 * SessionEnded ends its session's notes, anything else changes nothing. Throws
 * InvalidRecallRequestError for a RememberRequested no Remember could have published.
 */
export function sessionNoteChangeOf(event: LifecycleEvent): SessionNoteChange {
  if (event.type === 'SessionEnded') {
    const { tenantId, projectId, sessionId } = event;
    return { kind: 'end', scope: { tenantId, projectId }, sessionId };
  }
  if (event.type !== 'RememberRequested') return { kind: 'none' };
  const request = rememberRequestOf(event);
  return sessionNoteOf(request, event, null) ? { kind: 'hold', request, event } : { kind: 'none' };
}

/** The vectors of notes' texts, in order (null where there is none: the note is lexical only). */
export type EmbedNoteTexts = (texts: readonly string[]) => Promise<(ModelVector | null)[]>;

export interface SessionNoteViewOptions {
  notes: SessionNoteStore;
  /** Null: notes held by the view match lexically only. */
  embed: EmbedNoteTexts | null;
  /** The notes' idle expiry (SessionNoteLimits.idleExpiryMs): older Remembers are not held. */
  idleExpiryMs: number;
  clock: () => number;
  /** A record passed over, and why (the view has no dead letters: the topic's processors have). */
  warn: (message: string) => void;
}

export interface SessionNoteViewCounts {
  held: number;
  ended: number;
  /** Already held (Remember's own hold, or the same event again), or expired. */
  unchanged: number;
  malformed: number;
}

/**
 * Applies lifecycle events to the session notes, in their log order (one partition's batch: a
 * session's events share its partition, so its SessionEnded comes after its Remembers). Idempotent:
 * a note already held is left as it is (and not embedded again). Bounded per event: one embedding
 * per new note, computed for the batch in one call; a malformed event is passed over with a warning.
 */
export class SessionNoteView {
  constructor(private readonly options: SessionNoteViewOptions) {}

  async apply(events: readonly LifecycleEvent[]): Promise<SessionNoteViewCounts> {
    const counts: SessionNoteViewCounts = { held: 0, ended: 0, unchanged: 0, malformed: 0 };
    const changes = events.flatMap((event) => this.changeOf(event, counts));
    const holds = changes.flatMap((change) =>
      change.kind === 'hold' && !this.held(change) ? [change] : [],
    );
    const vectors = await this.embeddings(holds.map((hold) => hold.request.text));
    const vectorOf = new Map(holds.map((hold, i) => [hold.event, vectors[i] ?? null]));
    const { notes } = this.options;
    for (const change of changes) {
      if (change.kind === 'end') {
        notes.endSession(change.scope, change.sessionId);
        counts.ended += 1;
      } else if (change.kind === 'hold' && !this.held(change)) {
        const note = sessionNoteOf(
          change.request,
          change.event,
          vectorOf.get(change.event) ?? null,
        );
        // Held as of its Remember: it expires a day after it was written, not after it was read.
        if (note) notes.add(note, change.event.timestamp);
        counts.held += 1;
      } else {
        counts.unchanged += 1;
      }
    }
    return counts;
  }

  private changeOf(event: LifecycleEvent, counts: SessionNoteViewCounts): SessionNoteChange[] {
    let change: SessionNoteChange;
    try {
      change = sessionNoteChangeOf(event);
    } catch (error) {
      counts.malformed += 1;
      this.options.warn(
        `session notes: ${event.type} ${event.eventId} passed over: ${errorMessage(error)}`,
      );
      return [];
    }
    if (change.kind === 'none') return [];
    if (change.kind === 'hold' && this.expired(change.event)) {
      counts.unchanged += 1;
      return [];
    }
    return [change];
  }

  private expired(event: Typed<'RememberRequested'>): boolean {
    return this.options.clock() - event.timestamp > this.options.idleExpiryMs;
  }

  private held(change: Extract<SessionNoteChange, { kind: 'hold' }>): boolean {
    const memoryId = sessionNoteOf(change.request, change.event, null)?.memory.memoryId;
    const { scope, sessionId } = change.request;
    return this.options.notes
      .notesOf(scope, sessionId, this.options.clock())
      .some((note) => note.memory.memoryId === memoryId);
  }

  private async embeddings(texts: string[]): Promise<(ModelVector | null)[]> {
    const embed = this.options.embed;
    if (!embed || texts.length === 0) return texts.map(() => null);
    try {
      return await embed(texts);
    } catch (error) {
      this.options.warn(`session notes held without embeddings: ${errorMessage(error)}`);
      return texts.map(() => null);
    }
  }
}
