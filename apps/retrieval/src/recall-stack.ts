import { OpenAiCompatibleChatClient, type Embedder, type LlmClient } from '@engram/ai';
import type { Memory } from '@engram/contracts';
import { InMemorySessionNotes, type RankingConfig, type SessionNoteStore } from '@engram/core';
import { AccessTracker } from './access-tracker';
import { CachingEmbedder } from './caching-embedder';
import { ContextService } from './context.service';
import { EpisodeHistoryService } from './episode-history.service';
import { FeedbackService, type PublishTombstones } from './feedback.service';
import { RememberService, type PublishRecords } from './remember.service';
import type { RetrievalIndexer } from './retrieval-indexer';
import type { RecallStore } from './recall-store';
import { RecallService } from './recall.service';

/** Every service of the recall API on one store (Elasticsearch or the embedded SQLite one). */
export interface RecallStack {
  service: RecallService;
  /** InjectForFile, BuildContext, GetWorkflowRecipe. */
  context: ContextService;
  /** GetEpisodeSequence, GetEpisodeChain, ReplayTopic. */
  history: EpisodeHistoryService;
  remember: RememberService;
  feedback: FeedbackService;
  /** Access counts of returned and injected memories, written back to the store in batches. */
  access: AccessTracker;
  /**
   * The session notes Remember holds and Recall reads (the scratchpad tier); a recall server
   * started with the lifecycle log also fills it from there and ends a session's notes at its
   * SessionEnded (startSessionNoteTail). They also expire when idle.
   */
  notes: SessionNoteStore;
  /** The store they read (AnalyzeImpact joins it with the graph when the server has one). */
  store: RecallStore;
  ranking: RankingConfig;
}

/**
 * The recall services on a store, with access tracking writing back to it. Queries are embedded
 * through a small cache: agents repeat themselves, and embedding is a third of a recall's time.
 * Kept apart from the gRPC runtime so that in-process callers (`engram hook`) load no server.
 */
export function recallStackOn(
  store: RecallStore,
  embedder: Embedder,
  ranking: RankingConfig,
  writes: StackWrites = {},
  hyde: LlmClient | null = null,
): RecallStack {
  const access = new AccessTracker((updates) => store.writeAccess(updates), ranking.access);
  const cached = new CachingEmbedder(embedder, { maxEntries: 1024 });
  // One pad for Remember and Recall: a note is recallable in its session once Remember answered.
  const notes = new InMemorySessionNotes();
  const service = new RecallService(store, cached, { config: ranking, access, hyde, notes });
  const writeOptions = {
    publish: writes.publish,
    publishTombstones: writes.publishTombstones,
    indexMemory: writes.indexMemory ?? (() => Promise.resolve()),
    unindexMemory: writes.unindexMemory ?? (() => Promise.resolve()),
  };
  return {
    service,
    context: new ContextService(store, service, { config: ranking, access }),
    history: new EpisodeHistoryService(store, service, ranking),
    remember: new RememberService({ ...writeOptions, notes, embedder: cached }),
    feedback: new FeedbackService(store, writeOptions),
    access,
    notes,
    store,
    ranking,
  };
}

/**
 * The model HyDE asks (seed 002 §7: only when an LLM endpoint is configured, ENGRAM_LLM_*), or
 * null. One short attempt: a recall waits for it, and without it the recall still answers.
 */
export function hydeClientOf(
  llm: { baseUrl: string; model: string; apiKey?: string } | null,
): LlmClient | null {
  if (!llm) return null;
  return new OpenAiCompatibleChatClient({
    baseUrl: llm.baseUrl,
    model: llm.model,
    ...(llm.apiKey !== undefined && { apiKey: llm.apiKey }),
    timeoutMs: 10_000,
    maxAttempts: 1,
  });
}

/** What the write rpcs need beyond the store (Remember, Feedback). */
export interface StackWrites {
  /** The event log; absent: Remember and Feedback answer FAILED_PRECONDITION. */
  publish?: PublishRecords | null;
  /** Tombstones on the event log; absent: Feedback's deletions answer FAILED_PRECONDITION. */
  publishTombstones?: PublishTombstones | null;
  /** Writes a memory into this stack's store now. */
  indexMemory?: (memory: Memory) => Promise<void>;
  /** Removes a memory from this stack's store now. */
  unindexMemory?: (memoryId: string) => Promise<void>;
}

/**
 * A memory through the store's own indexer (same document, same vector, same id as the log's
 * consumer will write), then `settle` (Elasticsearch: refresh, so the next search sees it).
 */
export function indexMemoryWith(
  indexer: Pick<RetrievalIndexer, 'handleMemories'>,
  settle: () => Promise<unknown> = () => Promise.resolve(),
): (memory: Memory) => Promise<void> {
  return async (memory) => {
    const record = { topic: 'remember', partition: 0, offset: '0', key: memory.memoryId };
    await indexer.handleMemories([{ ...record, event: memory, headers: {} }]);
    await settle();
  };
}

/**
 * A memory out of the store through the store's own indexer, as the tombstone the log's consumer
 * will deliver (deleting an absent document is no error), then `settle`.
 */
export function unindexMemoryWith(
  indexer: Pick<RetrievalIndexer, 'handleMemories'>,
  settle: () => Promise<unknown> = () => Promise.resolve(),
): (memoryId: string) => Promise<void> {
  return async (memoryId) => {
    const record = { topic: 'feedback', partition: 0, offset: '0', key: memoryId };
    await indexer.handleMemories([{ ...record, event: null, headers: {} }]);
    await settle();
  };
}
