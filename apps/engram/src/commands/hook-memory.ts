import { loadConfig, type EngramConfig } from '@engram/config';
import {
  contextInWorkingTree,
  injectionInWorkingTree,
  type CheckedContextItem,
  type InjectedMemory,
  type PendingReviews,
} from '@engram/core';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { workingTreeCheck } from '../working-tree';
import type { HookMemory, HookScope } from './hook-types';

// Where a hook's memory context comes from: the embedded retrieval store in process, or the
// recall gRPC API of `engram start --distributed`.
// Loaded by every hook process: imports stay light (see hook.command.ts); the heavy stacks are
// imported inside the functions that need them.

/** The longest the distributed review count may take at SessionStart. */
const REVIEW_COUNT_MAX_MS = 500;

/** SessionStart counts the flagged memories up to this many ("100+" beyond: one small query). */
export const FLAGGED_MEMORY_COUNT_LIMIT = 100;

/** A bounded count of flagged memories, from a ListForReview page of at most the limit. */
export interface FlaggedMemoryCount {
  count: number;
  capped: boolean;
}

/** A page of ListForReview as either source answers it. */
type ReviewPage = { memories: readonly unknown[]; nextPageToken: string };

function flaggedCount(page: ReviewPage): FlaggedMemoryCount {
  return { count: page.memories.length, capped: page.nextPageToken !== '' };
}

/**
 * Proposals and flagged memories counted side by side; a count that fails is left out (0): the
 * reminder is a courtesy, never a reason to fail or slow the hook.
 */
export async function pendingReviewsOf(
  proposals: (() => Promise<number>) | null,
  memories: () => Promise<FlaggedMemoryCount>,
): Promise<PendingReviews> {
  const [p, m] = await Promise.all([
    proposals === null ? 0 : proposals().catch(() => 0),
    memories().catch(() => ({ count: 0, capped: false })),
  ]);
  return { proposals: p, memories: m.count, memoriesCapped: m.capped };
}

/**
 * Memory from the embedded retrieval store in `dataDir`, through the Recall API's own services
 * on that store, in process (lexical only: the embedding model takes seconds to load, far past a
 * hook's budget). Null when the data directory has no retrieval store yet.
 *
 * - buildContext: BuildContext — the session's current thread, "You were asking about …"
 *   continuity, the latest work state, recipes and memories for the prompt, within the default
 *   token budget, each item cited. At SessionStart (no prompt yet) the query is the git branch's
 *   words, if any.
 * - injectForFile: InjectForFile — the proven, non-stale warnings about that file (seed 002's
 *   rules, including which tools inject).
 */
export async function embeddedHookMemory(dataDir: string): Promise<HookMemory | null> {
  if (!existsSync(join(dataDir, 'retrieval.db'))) return null;
  const [
    { SqliteRetrievalStore },
    { createRecallStack, sqliteBackend, LEXICAL_ONLY_EMBEDDER, ReviewQueueService },
  ] = await Promise.all([import('@engram/embedded'), import('@engram/app-retrieval/embedded')]);
  const store = SqliteRetrievalStore.open({ dataDir });
  const { context, access } = createRecallStack({
    ranking: loadConfig().ranking,
    backend: sqliteBackend(store),
    embedder: LEXICAL_ONLY_EMBEDDER,
  });
  const queue = new ReviewQueueService(store);
  return hookMemoryOn({
    buildContext: (input) => context.buildContext(input),
    injectForFile: (input) => context.injectForFile(input),
    pendingReviews: (scope) =>
      pendingReviewsOf(
        () => embeddedPendingProposals(dataDir, scope),
        async () =>
          flaggedCount(await queue.listForReview({ ...scope, limit: FLAGGED_MEMORY_COUNT_LIMIT })),
      ),
    async close() {
      await access.close().catch(() => undefined);
      store.close();
    },
  });
}

/**
 * Memory from the recall gRPC API of `engram start --distributed` (config.recall: the URL,
 * default 127.0.0.1:50051, and the optional bearer token), the same rpcs and the same printed
 * text as embedded mode. Every call carries `deadline` as its gRPC deadline; a server that is
 * down answers UNAVAILABLE at once: the hook prints no context, a line on stderr, and exits 0.
 * @grpc/grpc-js and the proto are loaded here, on the first context request, not at start-up.
 */
export async function grpcHookMemory(
  config: Pick<EngramConfig, 'recall'> & {
    /** Where the review API is (the pending-proposal count at SessionStart); absent: not asked. */
    distiller?: Pick<EngramConfig['distiller'], 'reviewGrpcUrl'>;
  },
  deadline: number,
): Promise<HookMemory> {
  const { openRecallContextClient } = await import('../hook-context-grpc');
  const client = await openRecallContextClient({
    url: config.recall.grpcUrl,
    token: config.recall.token,
    deadline,
  });
  return hookMemoryOn({
    buildContext: (input) => client.buildContext(input),
    injectForFile: (input) => client.injectForFile(input),
    pendingReviews: (scope: HookScope) =>
      pendingReviewsOf(
        config.distiller
          ? () =>
              grpcPendingProposals(
                config.distiller!.reviewGrpcUrl,
                config.recall.token,
                deadline,
                scope,
              )
          : null,
        async () =>
          flaggedCount(await client.listForReview({ ...scope, limit: FLAGGED_MEMORY_COUNT_LIMIT })),
      ),
    close: () => Promise.resolve(client.close()),
  });
}

/** The project's pending MEMORY.md proposals from the review API (engram.review.v1). */
async function grpcPendingProposals(
  url: string,
  token: string | undefined,
  deadline: number,
  scope: HookScope,
): Promise<number> {
  const { ReviewGrpcClient } = await import('@engram/app-distiller');
  const review = new ReviewGrpcClient(url, {
    ...(token !== undefined && { token }),
    // Ends before the context's deadline: a slow review server costs the line, not the context.
    deadlineMs: Math.max(1, Math.min(REVIEW_COUNT_MAX_MS, deadline - Date.now() - 100)),
  });
  try {
    const { proposals } = await review.list({
      scope: { tenantId: scope.tenantId, projectId: scope.projectId },
      status: 'pending',
    });
    return proposals.length;
  } finally {
    review.close();
  }
}

/**
 * What awaits review in the embedded data directory: the pending proposals and the memories
 * flagged needsReview of the retrieval store (`engram start`'s hook socket asks this).
 */
export async function embeddedPendingReviews(
  dataDir: string,
  scope: HookScope,
): Promise<PendingReviews> {
  return pendingReviewsOf(
    () => embeddedPendingProposals(dataDir, scope),
    () => embeddedFlaggedMemories(dataDir, scope),
  );
}

/** The project's memories flagged needsReview in the embedded retrieval store, bounded. */
async function embeddedFlaggedMemories(
  dataDir: string,
  scope: HookScope,
): Promise<FlaggedMemoryCount> {
  if (!existsSync(join(dataDir, 'retrieval.db'))) return { count: 0, capped: false };
  const [{ SqliteRetrievalStore }, { ReviewQueueService }] = await Promise.all([
    import('@engram/embedded'),
    import('@engram/app-retrieval/embedded'),
  ]);
  const store = SqliteRetrievalStore.open({ dataDir });
  try {
    const queue = new ReviewQueueService(store);
    return flaggedCount(await queue.listForReview({ ...scope, limit: FLAGGED_MEMORY_COUNT_LIMIT }));
  } finally {
    store.close();
  }
}

/**
 * The project's pending MEMORY.md proposals in the embedded log (memory.proposals.v1, compacted:
 * a few records per project and day), as `engram review` lists them; 0 before any reflection.
 */
export async function embeddedPendingProposals(dataDir: string, scope: HookScope): Promise<number> {
  if (!existsSync(join(dataDir, 'events.db'))) return 0;
  const [{ SqliteEventLog, SqliteEventLogAdapter }, distiller] = await Promise.all([
    import('@engram/embedded'),
    import('@engram/app-distiller'),
  ]);
  const topics = distiller.prefixedDistillerTopics(loadConfig().topicPrefix);
  const log = SqliteEventLog.open({ dataDir });
  try {
    if (log.topic(topics.proposals) === undefined) return 0;
    const desk = new distiller.ReviewDesk(
      new SqliteEventLogAdapter(log),
      distiller.distillerCodecs(topics),
      { timeoutMs: 1_000 },
    );
    const pending = await desk.list({ ...scope, status: 'pending' });
    return pending.length;
  } finally {
    log.close();
  }
}

/**
 * BuildContext and InjectForFile as either source answers them: their `rendered` text, and the
 * items or memories behind it with their related files (checked against the working tree).
 */
export interface ContextAnswers {
  buildContext(
    input: HookScope & { query: string },
  ): Promise<{ rendered: string; items?: readonly CheckedContextItem[] }>;
  injectForFile(
    input: HookScope & { filePath: string; toolName: string },
  ): Promise<{ rendered: string; memories?: readonly InjectedMemory[] }>;
  pendingReviews?: (scope: HookScope) => Promise<PendingReviews>;
  close(): Promise<void>;
}

/**
 * What the hook prints from either source: the same text whichever answers. With the project
 * root known, what is about files that are all gone from the working tree is left out first
 * (seed 002 §7, layer 1: the service cannot stat the agent's files), and the scope's
 * `onFilesGone` is told what was.
 */
export function hookMemoryOn(answers: ContextAnswers): HookMemory {
  return {
    async buildContext({ projectRoot, onFilesGone, ...scope }, query) {
      const { items, rendered } = await answers.buildContext({ ...scope, query: query ?? '' });
      const check = workingTreeCheck(projectRoot);
      if (!check || !items) return titled('Engram memory for this request', rendered);
      const checked = contextInWorkingTree({ items, rendered }, check);
      if (checked.gone.length > 0) onFilesGone?.(checked.gone);
      return titled('Engram memory for this request', checked.answer.rendered);
    },
    async injectForFile({ projectRoot, onFilesGone, ...scope }, filePath, toolName) {
      const selection = await answers.injectForFile({
        ...scope,
        filePath,
        toolName: EDITING_TOOLS.has(toolName) ? 'Edit' : toolName,
      });
      const { memories, rendered } = selection;
      const check = workingTreeCheck(projectRoot);
      if (!check || !memories) return rendered;
      const checked = injectionInWorkingTree({ memories, rendered }, check);
      if (checked.gone.length > 0) onFilesGone?.(checked.gone);
      return checked.answer.rendered;
    },
    ...(answers.pendingReviews && { pendingReviews: answers.pendingReviews }),
    close: () => answers.close(),
  };
}

/**
 * Claude Code's other ways of changing a file: to seed 002's injection rule (Read and Edit) they
 * are edits — a warning about a file matters as much before overwriting it as before editing it.
 */
const EDITING_TOOLS: ReadonlySet<string> = new Set(['MultiEdit', 'Write', 'NotebookEdit']);

/** Assembled context under a title that says where it comes from; '' when there is none. */
export function titled(title: string, rendered: string): string {
  return rendered === ''
    ? ''
    : `${title} (recalled from past sessions; cite the id in brackets):\n${rendered}`;
}
