import type { Memory, RecordName } from '@engram/contracts';
import {
  applyFeedback,
  feedbackDeletes,
  InvalidRecallRequestError,
  loadRelatedMemories,
  MisconfigurationError,
  parseFeedback,
  propagateConfidence,
  propagatedVersions,
  type FeedbackInput,
  type FeedbackRequest,
  anyOfFilter,
  memoryFilters,
} from '@engram/core';
import { memoryFromSource, type MemoryDocument } from '@engram/core';
import type { RecallStore } from './recall-store';
import type { PublishRecords } from './remember.service';

/**
 * Deletes records by key on the contract topic of a record type (a compacted one): tombstones,
 * durable when it resolves (publishTombstonesTo on an event log).
 */
export type PublishTombstones = (record: RecordName, keys: string[]) => Promise<void>;

export interface FeedbackAnswer {
  memoryId: string;
  applied: boolean;
  /** After the feedback; 0 for a deleted memory. */
  confidence: number;
  deleted: boolean;
}

export interface FeedbackServiceOptions {
  publish?: PublishRecords | null;
  /** Tombstones on the event log; absent: DELETE and duplicates are refused, saying why. */
  publishTombstones?: PublishTombstones | null;
  indexMemory: (memory: Memory) => Promise<void>;
  /** Removes a memory from the retrieval store now (the indexer's tombstone handler). */
  unindexMemory: (memoryId: string) => Promise<void>;
  clock?: () => number;
}

/**
 * Feedback: the memory's next version (core `applyFeedback`) on memory.memories.v1 under the same
 * id, and in the retrieval store at once, so the next injection already honours it. Deleting
 * (DELETE, or CORRECT as a duplicate of another memory of the project) publishes the memory's
 * tombstone on that compacted topic — the indexers delete the document when it reaches them,
 * compaction drops the memory's versions — and removes it from the store at once. Either way
 * the memory must be one of the caller's project: another tenant's or project's is not found.
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
    if (feedbackDeletes(request)) return this.delete(request);
    const publish = this.options.publish;
    if (!publish) {
      throw new MisconfigurationError(
        'Feedback needs the event log, and this recall server was started without one',
      );
    }
    const memory = await this.memoryOfProject(request);
    const next = applyFeedback(memory, request, this.clock());
    const propagated = await this.propagated(request, memory.confidence, next);
    await publish([next, ...propagated].map((m) => ({ type: 'Memory' as const, ...m })));
    for (const written of [next, ...propagated]) await this.options.indexMemory(written);
    return { memoryId: next.memoryId, applied: true, confidence: next.confidence, deleted: false };
  }

  /**
   * When the feedback moved the memory's confidence, the next versions of the memories its
   * relations reach that move with it (core `propagateConfidence`: the seed's coefficients, stop
   * below 0.05, cycle-safe). The store gives the project's memories the relations name, hop by
   * hop (core `loadRelatedMemories`: bounded hops and memories).
   */
  private async propagated(
    request: FeedbackRequest,
    before: number,
    next: Memory,
  ): Promise<Memory[]> {
    if (next.confidence === before) return [];
    const loaded = await loadRelatedMemories([next], (ids) => this.memoriesOfProject(request, ids));
    const moved = propagateConfidence(next, before, (id) => loaded.get(id));
    return propagatedVersions(moved, loaded, next);
  }

  /** The tombstone first (the log is the truth: if it fails, nothing changed), then the store. */
  private async delete(request: FeedbackRequest): Promise<FeedbackAnswer> {
    const publishTombstones = this.options.publishTombstones;
    if (!publishTombstones) {
      throw new MisconfigurationError(
        'deleting a memory (DELETE, or CORRECT as a duplicate) publishes a tombstone on ' +
          'memory.memories.v1, and this recall server was started without the event log',
      );
    }
    const memory = await this.memoryOfProject(request);
    await publishTombstones('Memory', [memory.memoryId]);
    await this.options.unindexMemory(memory.memoryId);
    return { memoryId: memory.memoryId, applied: true, confidence: 0, deleted: true };
  }

  /**
   * The memory, if it is one of the request's project (and tenant); for a duplicate, the memory
   * it duplicates must be one too — deleting a copy of nothing would lose the knowledge.
   */
  private async memoryOfProject(request: FeedbackRequest): Promise<Memory> {
    const original = request.reason === 'duplicate' ? request.duplicateOfMemoryId : null;
    const ids = original === null ? [request.memoryId] : [request.memoryId, original];
    const found = new Map((await this.memoriesOfProject(request, ids)).map((m) => [m.memoryId, m]));
    const memory = found.get(request.memoryId);
    if (!memory) {
      throw new InvalidRecallRequestError(
        'memoryId',
        `no memory ${request.memoryId} in this project`,
      );
    }
    if (original !== null && !found.has(original)) {
      throw new InvalidRecallRequestError(
        'duplicateOfMemoryId',
        `no memory ${original} in this project: a duplicate names the memory it repeats`,
      );
    }
    return memory;
  }

  /** The memories of the request's project (and tenant) among `ids`. */
  private async memoriesOfProject(request: FeedbackRequest, ids: string[]): Promise<Memory[]> {
    const stored = await this.store.list<MemoryDocument>('memories', {
      scope: request.scope,
      filter: [...memoryFilters({}, undefined), anyOfFilter('memoryId', ids)],
      size: ids.length,
    });
    return stored.map(({ source }) => memoryFromSource(source));
  }
}
