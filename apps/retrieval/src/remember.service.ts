import type { Memory, Typed } from '@engram/contracts';
import {
  isUserTaught,
  MisconfigurationError,
  parseRememberRequest,
  rememberRequestedEvent,
  userTaughtMemory,
  type RememberInput,
} from '@engram/core';

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
}

/**
 * Remember: the RememberRequested event on agent.lifecycle.v1 for every request; for a memory a
 * person taught, also the memory itself on memory.memories.v1 (the log stays the source of
 * truth, a reindex finds it) and in the retrieval store at once (the next recall finds it,
 * without waiting for the indexer). All writes are by deterministic id: a retry is an upsert.
 */
export class RememberService {
  private readonly clock: () => number;

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
      return { eventId: event.eventId, memoryId: '', accepted: true };
    }
    const memory = userTaughtMemory(request, event);
    await publish([event, { type: 'Memory', ...memory }]);
    await this.options.indexMemory(memory);
    return { eventId: event.eventId, memoryId: memory.memoryId, accepted: true };
  }
}
