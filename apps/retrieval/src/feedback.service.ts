import type { Memory } from '@engram/contracts';
import {
  applyFeedback,
  feedbackDeletes,
  InvalidRecallRequestError,
  MisconfigurationError,
  parseFeedback,
  type FeedbackInput,
} from '@engram/core';
import {
  anyOfFilter,
  memoryFilters,
  memoryFromSource,
  type MemoryDocument,
} from '@engram/elasticsearch';
import type { RecallStore } from './recall-store';
import type { PublishRecords } from './remember.service';

export interface FeedbackAnswer {
  memoryId: string;
  applied: boolean;
  confidence: number;
  deleted: boolean;
}

export interface FeedbackServiceOptions {
  publish?: PublishRecords | null;
  indexMemory: (memory: Memory) => Promise<void>;
  clock?: () => number;
}

/**
 * Feedback: the memory's next version (core `applyFeedback`) on memory.memories.v1 under the same
 * id, and in the retrieval store at once, so the next injection already honours it. Deleting
 * needs a tombstone on the compacted topic, which the event log port cannot publish yet: DELETE
 * and CORRECT-as-duplicate are refused with FAILED_PRECONDITION, saying so.
 */
export class FeedbackService {
  private readonly clock: () => number;

  constructor(
    private readonly store: RecallStore,
    private readonly options: FeedbackServiceOptions,
  ) {
    this.clock = options.clock ?? Date.now;
  }

  async feedback(input: FeedbackInput): Promise<FeedbackAnswer> {
    const request = parseFeedback(input);
    const publish = this.options.publish;
    if (!publish) {
      throw new MisconfigurationError(
        'Feedback needs the event log, and this recall server was started without one',
      );
    }
    if (feedbackDeletes(request)) {
      throw new MisconfigurationError(
        'deleting a memory (DELETE, or CORRECT as a duplicate) needs a tombstone on ' +
          'memory.memories.v1, which this server cannot publish yet; FLAG_WRONG it instead',
      );
    }
    const [stored] = await this.store.list<MemoryDocument>('memories', {
      filter: [
        ...memoryFilters(request.scope, undefined),
        anyOfFilter('memoryId', [request.memoryId]),
      ],
      size: 1,
    });
    if (!stored) {
      throw new InvalidRecallRequestError(
        'memoryId',
        `no memory ${request.memoryId} in this project`,
      );
    }
    const next = applyFeedback(memoryFromSource(stored.source), request, this.clock());
    await publish([{ type: 'Memory', ...next }]);
    await this.options.indexMemory(next);
    return { memoryId: next.memoryId, applied: true, confidence: next.confidence, deleted: false };
  }
}
