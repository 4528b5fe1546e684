import {
  anyOfFilter,
  notesAwaitingValidation,
  type RecallQuery,
  type RecallScope,
  type SessionNote,
  type SessionNoteStore,
} from '@engram/core';
import type { MemoryDocument } from '@engram/elasticsearch';
import type { RecallStore } from './recall-store';

/**
 * A recall's session notes (the scratchpad tier, seed 002 §8): those of the session the request
 * names, still awaiting validation. Nothing is asked of anyone unless that session has notes —
 * the hot path of every other recall is one Map lookup. A note whose validated memory the store
 * now holds is shown as that memory (same id) and forgotten, so the store is asked about it once.
 */
export class SessionNoteLookup {
  constructor(
    private readonly store: RecallStore,
    private readonly notes: SessionNoteStore | null,
    private readonly clock: () => number,
  ) {}

  /** Null when there is nothing to look up (no session, no memories tier, no notes). */
  pending(query: RecallQuery): Promise<SessionNote[]> | null {
    if (this.notes === null || query.sessionId === null) return null;
    if (!query.tiers.includes('memories')) return null;
    const notes = this.notes.notesOf(query.scope, query.sessionId, this.clock());
    if (notes.length === 0) return null;
    return this.awaitingValidation(query.scope, query.sessionId, notes);
  }

  private async awaitingValidation(
    scope: RecallScope,
    sessionId: string,
    notes: readonly SessionNote[],
  ): Promise<SessionNote[]> {
    const ids = notes.map((note) => note.memory.memoryId);
    const indexed = await this.store.list<MemoryDocument>('memories', {
      scope,
      filter: [anyOfFilter('memoryId', ids)],
      size: ids.length,
    });
    const indexedIds = new Set(indexed.map((doc) => doc.source.memoryId));
    this.notes?.forget(scope, sessionId, [...indexedIds]);
    return notesAwaitingValidation(notes, indexedIds);
  }
}
