import type { Embedder } from '@engram/ai';
import type { Episode, Memory, PromptSubmitted, ToolCallObserved } from '@engram/contracts';
import {
  modelVector,
  type Delivered,
  type DeliveredOrTombstone,
  type RecallStoreWriter,
  type StoreWrite,
} from '@engram/core';
import { withEmbedding } from '@engram/core';
import {
  lastWins,
  planAccessCleanup,
  planEpisodes,
  planMemories,
  planTurns,
  type Plan,
} from './index-plan';
import { withSupersession, type SupersessionCandidates } from './supersession-index';

export interface IndexerCounters {
  /** Documents written (a re-run after a retry counts again). */
  indexed: number;
  deleted: number;
  /** Tombstones of documents that were already gone. */
  alreadyAbsent: number;
  /** Agent and system prompts, which are not turns. */
  skipped: number;
  bulkRequests: number;
  embedded: number;
  /** Access counters removed with their memory (where the store keeps them apart). */
  accessCountersDeleted: number;
  /** Tool calls written to the tool-call index (distributed mode; a redelivery counts again). */
  toolCallsIndexed: number;
}

/**
 * Where the tool calls go (distributed mode: the engram-tool-calls index, for the friction
 * report). A write by eventId: a redelivered call overwrites its document.
 */
export interface ToolCallIndex {
  write(calls: readonly ToolCallObserved[]): Promise<{ indexed: number; requests: number }>;
}

/**
 * The indexing half of retrieval: one batch handler per input topic. A handler plans the writes
 * (pure document builders), embeds the texts, and writes them to the store by explicit id
 * (RecallStoreWriter). It returns only when the store applied every write, so the consumer
 * commits the offsets only then; it throws classified errors otherwise (outage: retried;
 * rejected document: dead-lettered by the consumer, which retries the batch record by record).
 */
export class RetrievalIndexer {
  readonly counters: IndexerCounters = {
    indexed: 0,
    deleted: 0,
    alreadyAbsent: 0,
    skipped: 0,
    bulkRequests: 0,
    embedded: 0,
    accessCountersDeleted: 0,
    toolCallsIndexed: 0,
  };

  constructor(
    private readonly embedder: Embedder,
    private readonly writer: RecallStoreWriter,
    /** The store's memories like one being indexed: supersession (absent: none). */
    private readonly supersession: SupersessionCandidates | null = null,
    /** Where tool calls are kept (absent: not consumed, as in embedded mode). */
    private readonly toolCalls: ToolCallIndex | null = null,
  ) {}

  /** Memories, and tombstones of memories (memory.memories.v1 is compacted). */
  readonly handleMemories = async (items: DeliveredOrTombstone<Memory>[]): Promise<void> => {
    const resolved = this.supersession ? await withSupersession(items, this.supersession) : items;
    await this.apply(planMemories(resolved, 'memories'));
    await this.removeAccessCounters(items);
  };

  /** Episodes, and tombstones of episodes (memory.episodes.v1 is compacted). */
  readonly handleEpisodes = (items: DeliveredOrTombstone<Episode>[]): Promise<void> =>
    this.apply(planEpisodes(items, 'episodes'));

  readonly handlePrompts = (items: Delivered<PromptSubmitted>[]): Promise<void> =>
    this.apply(planTurns(items, 'turns'));

  /**
   * Tool calls, as compact documents without embedding (nothing searches their text). One write
   * per eventId in the batch; without a tool-call index (embedded mode) there is nothing to do.
   */
  readonly handleToolCalls = async (items: Delivered<ToolCallObserved>[]): Promise<void> => {
    if (this.toolCalls === null || items.length === 0) return;
    const byEventId = new Map(items.map(({ event }) => [event.eventId, event]));
    const report = await this.toolCalls.write([...byEventId.values()]);
    this.counters.toolCallsIndexed += report.indexed;
    this.counters.bulkRequests += report.requests;
  };

  /** After the memories: a retried batch deletes them again first (deletes are idempotent). */
  private async removeAccessCounters(items: DeliveredOrTombstone<Memory>[]): Promise<void> {
    if (this.writer.deleteAccessCounters === undefined) return;
    const memoryIds = planAccessCleanup(items, 'memoryAccess').map((op) => op.id);
    if (memoryIds.length === 0) return;
    const report = await this.writer.deleteAccessCounters(memoryIds);
    this.counters.accessCountersDeleted += report.deleted;
    this.counters.bulkRequests += report.requests;
  }

  private async apply(plan: Plan): Promise<void> {
    const planned = lastWins(plan.operations);
    const texts = planned.flatMap((op) =>
      op.action === 'index' && op.text.trim() !== '' ? [op.text] : [],
    );
    const vectors = texts.length > 0 ? await this.embedder.embed(texts) : [];
    const byText = new Map(texts.map((text, i) => [text, vectors[i]]));
    const writes = planned.map((op): StoreWrite => {
      const tier = op.index as StoreWrite['tier']; // planned with the tier's name (above)
      if (op.action === 'delete') return { action: 'delete', tier, id: op.id };
      const vector = byText.get(op.text);
      if (vector && vector.length !== this.embedder.dims) {
        throw new RangeError(
          `embedder ${this.embedder.id} returned ${vector.length} dimensions, not ${this.embedder.dims}`,
        );
      }
      return {
        action: 'upsert',
        tier,
        id: op.id,
        document: withEmbedding(op.body, vector ? modelVector(this.embedder.id, vector) : null),
      };
    });
    if (writes.length > 0) {
      const report = await this.writer.write(writes);
      this.counters.indexed += report.indexed;
      this.counters.deleted += report.deleted;
      this.counters.alreadyAbsent += report.alreadyAbsent;
      this.counters.bulkRequests += report.requests;
    }
    this.counters.embedded += texts.length;
    this.counters.skipped += plan.skipped;
  }
}
