import {
  notesAwaitingValidation,
  type RecallQuery,
  type SessionNote,
  type SessionNoteStore,
} from '@engram/core';

/**
 * A recall's session notes (the scratchpad tier, seed 002 §8): those of the session the request
 * names. Nothing is asked of the store for them: every other recall pays one Map lookup, and a
 * session with notes ranks a few dozen of them in memory.
 */
export class SessionNoteLookup {
  constructor(
    private readonly notes: SessionNoteStore | null,
    private readonly clock: () => number,
  ) {}

  /** Empty when there is nothing to look at (no session, no memories tier, no notes). */
  of(query: RecallQuery): readonly SessionNote[] {
    if (this.notes === null || query.sessionId === null) return [];
    if (!query.tiers.includes('memories')) return [];
    return this.notes.notesOf(query.scope, query.sessionId, this.clock());
  }

  /**
   * The notes whose validated memory the store did not return as a candidate of this recall. A
   * note's memory has the id its validated memory gets, and the same text and vector: whenever the
   * note matches the query, so does that memory, and the store's candidates (over-fetched, before
   * any ranking) hold it once it is indexed — it is shown, or filtered out, as itself, never
   * beside its note. The notes it replaces are forgotten.
   */
  awaitingValidation(
    query: RecallQuery,
    notes: readonly SessionNote[],
    candidateMemoryIds: ReadonlySet<string>,
  ): SessionNote[] {
    const pending = notesAwaitingValidation(notes, candidateMemoryIds);
    if (pending.length < notes.length && query.sessionId !== null) {
      const validated = notes.filter((note) => candidateMemoryIds.has(note.memory.memoryId));
      this.notes?.forget(
        query.scope,
        query.sessionId,
        validated.map((note) => note.memory.memoryId),
      );
    }
    return pending;
  }
}
