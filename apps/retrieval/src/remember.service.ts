import type { Embedder } from '@engram/ai';
import type { Memory, Typed } from '@engram/contracts';
import {
  errorMessage,
  isSessionNoteRequest,
  isUserTaught,
  MisconfigurationError,
  parseRememberRequest,
  rememberRequestedEvent,
  sessionNoteOf,
  userTaughtMemory,
  type ModelVector,
  type RememberInput,
  type RememberRequest,
  type SessionNoteStore,
} from '@engram/core';
import { Logger } from '@nestjs/common';
import { embedNoteTextsWith } from './note-embeddings';

/** Publishes records on their contract topics, in order (the hook's and replay's publishers). */
export type PublishRecords = (records: Typed[]) => Promise<void>;

export interface RememberAnswer {
  eventId: string;
  /** The user_taught memory's id; '' for an agent's note (promoted later, after validation). */
  memoryId: string;
  accepted: boolean;
}

export interface RememberServiceOptions {
  /** The event log (Kafka or the embedded one); absent: Remember is refused, saying why. */
  publish?: PublishRecords | null;
  /** Writes a memory into the retrieval store now (the indexer's handler, same document). */
  indexMemory: (memory: Memory) => Promise<void>;
  clock?: () => number;
  /**
   * The scratchpad tier: an agent's note is also held here for its own session, recallable there
   * at once (the RecallService given the same store reads it). Null or absent: not held.
   */
  notes?: SessionNoteStore | null;
  /** Embeds a held note, so that a paraphrase finds it too; null or absent: lexical only. */
  embedder?: Embedder | null;
}

/**
 * Remember: the RememberRequested event on agent.lifecycle.v1 for every request; for a memory a
 * person taught, also the memory itself on memory.memories.v1 (the log stays the source of
 * truth, a reindex finds it) and in the retrieval store at once (the next recall finds it,
 * without waiting for the indexer). An agent's note waits for validation in the observer, and
 * meanwhile is a session note (seed 002 §8): recallable in its own session once Remember has
 * answered. All writes are by deterministic id: a retry is an upsert.
 */
export class RememberService {
  private readonly clock: () => number;
  private readonly logger = new Logger(RememberService.name);

  constructor(private readonly options: RememberServiceOptions) {
    this.clock = options.clock ?? Date.now;
  }

  async remember(input: RememberInput): Promise<RememberAnswer> {
    const request = parseRememberRequest(input);
    const publish = this.options.publish;
    if (!publish) {
      throw new MisconfigurationError(
        'Remember needs the event log, and this recall server was started without one',
      );
    }
    const event = rememberRequestedEvent(request, this.clock());
    if (!isUserTaught(request)) {
      await publish([event]);
      await this.holdForSession(request, event);
      return { eventId: event.eventId, memoryId: '', accepted: true };
    }
    const memory = userTaughtMemory(request, event);
    await publish([event, { type: 'Memory', ...memory }]);
    await this.options.indexMemory(memory);
    return { eventId: event.eventId, memoryId: memory.memoryId, accepted: true };
  }

  /** After the log has the event: the log is the source of truth, the note only a preview of it. */
  private async holdForSession(
    request: RememberRequest,
    event: Typed<'RememberRequested'>,
  ): Promise<void> {
    const notes = this.options.notes;
    if (!notes || !isSessionNoteRequest(request)) return;
    const note = sessionNoteOf(request, event, await this.embedding(request.text));
    if (note) notes.add(note, this.clock());
  }

  /** The note's vector; null when it cannot be had (the note is still held, lexical only). */
  private async embedding(text: string): Promise<ModelVector | null> {
    const embed = embedNoteTextsWith(this.options.embedder);
    if (!embed) return null;
    try {
      const [vector] = await embed([text]);
      return vector ?? null;
    } catch (error) {
      this.logger.warn(`session note held without an embedding: ${errorMessage(error)}`);
      return null;
    }
  }
}
