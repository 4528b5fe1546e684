import type { Episode, Memory, MemoryType } from '@engram/contracts';
import {
  accessHitOf,
  assembleContext,
  DEFAULT_RANKING_CONFIG,
  injectionFilter,
  injectsForTool,
  InvalidRecallRequestError,
  MAX_RECALL_QUERY_CHARS,
  requireScope,
  resolveCurrentThread,
  selectInjections,
  toUniversalPhase,
  type AssembledContext,
  type InjectionSelection,
  type RankedMemory,
  type RankingConfig,
  type RecallScope,
  anyOfFilter,
  episodeFilters,
  memoryFilters,
  relatedFileFilter,
  turnFilters,
  workStateAnchor,
  workStateFilters,
  type CurrentThread,
  type StoreFilter,
  type WorkStateAnchor,
} from '@engram/core';
import {
  episodeFromSource,
  memoryFromSource,
  turnFromSource,
  type EpisodeDocument,
  type MemoryDocument,
  type TurnDocument,
} from '@engram/core';
import type { AccessTracker } from './access-tracker';
import type { RecallStore } from './recall-store';
import type { RecallService } from './recall.service';

/**
 * Injection candidates fetched per file: the "proven" rule and the limit are the core's, so the
 * store returns more than the four that may be injected.
 */
export const INJECTION_CANDIDATES = 50;
/** Episodes of the asking session read to resolve its thread and cross-thread links. */
const SESSION_EPISODES = 50;
/**
 * The latest linked work states considered (the core keeps the most strongly linked, then the
 * newest): one per session, so this bounds the sessions of a thread and its work units.
 */
const WORK_STATE_CANDIDATES = 20;
/** Episodes recalled for the query as candidate continuity in implicit channels. */
const RELATED_EPISODES = 5;
/** A recalled episode below this relevance is not "related" enough to be brought back. */
const RELATED_EPISODE_MIN_RELEVANCE = 0.5;

export interface InjectForFileInput {
  tenantId: string;
  projectId: string;
  filePath: string;
  /** Read, Edit, …; empty: any (the caller decided injection applies). */
  toolName?: string;
  phase?: string;
  /** 0 or absent: the configured maximum (4). */
  limit?: number;
  sessionId?: string;
}

export interface BuildContextInput {
  tenantId: string;
  projectId: string;
  sessionId: string;
  /** The turn's text; empty: the session's newest turn stands in for it. */
  query?: string;
  phase?: string;
  /** 0 or absent: the configured default. */
  tokenBudget?: number;
}

export interface WorkflowRecipeInput {
  tenantId: string;
  projectId: string;
  taskDescription: string;
  phase?: string;
  /** 0 or absent: the configured maximum (2). */
  limit?: number;
}

export interface ContextServiceOptions {
  config?: RankingConfig;
  clock?: () => number;
  /** Injected memories count as accessed (the "proven" rule reads accessCount). */
  access?: AccessTracker | null;
}

/**
 * The proactive rpcs (SPEC §7; seed 002 §7, seed 004 §3): InjectForFile, BuildContext and
 * GetWorkflowRecipe. The store fetches, the pure core decides (selectInjections,
 * resolveCurrentThread, assembleContext); query-driven parts go through RecallService, so they
 * rank exactly as a Recall does.
 */
export class ContextService {
  private readonly config: RankingConfig;
  private readonly clock: () => number;
  private readonly access: AccessTracker | null;

  constructor(
    private readonly store: RecallStore,
    private readonly recall: RecallService,
    options: ContextServiceOptions = {},
  ) {
    this.config = options.config ?? DEFAULT_RANKING_CONFIG;
    this.clock = options.clock ?? Date.now;
    this.access = options.access ?? null;
  }

  /**
   * What to append when an agent reads or edits a file: the core's injection rules (the four
   * warning types about that file, confident, proven, never stale; at most four).
   */
  async injectForFile(input: InjectForFileInput): Promise<InjectionSelection> {
    const scope = requireScope(input);
    const limit = optionalCount(input.limit, 'limit');
    const toolName = input.toolName?.trim() ?? '';
    const filter = injectionFilter(scope, input.filePath, this.config);
    if (toolName !== '' && !injectsForTool(toolName, this.config)) {
      return { memories: [], rejected: [], rendered: '' };
    }
    const listed = await this.store.list<MemoryDocument>('memories', {
      scope,
      filter: [...memoryFilters(filter, undefined), relatedFileFilter(input.filePath)],
      size: INJECTION_CANDIDATES,
    });
    const selection = selectInjections(
      {
        scope,
        filePath: input.filePath,
        phase: toUniversalPhase(null, input.phase),
        now: this.clock(),
        candidates: listed.map((doc) => memoryFromSource(doc.source)),
        ...(limit !== undefined && { limit }),
      },
      this.config,
    );
    this.access?.record(selection.memories.map((m) => accessHitOf(scope, m.memory)));
    return selection;
  }

  /** Seed 004 §3: the session's thread, continuity, work state, recipes and memories, budgeted. */
  async buildContext(input: BuildContextInput): Promise<AssembledContext> {
    const scope = requireScope(input);
    const sessionId = input.sessionId?.trim() ?? '';
    if (sessionId === '') throw new InvalidRecallRequestError('sessionId', 'is required');
    const [turns, sessionEpisodes] = await Promise.all([
      this.store.list<TurnDocument>('turns', {
        scope,
        filter: [...turnFilters(undefined), anyOfFilter('sessionId', [sessionId])],
        size: 2 * this.config.context.maxThreadTurns,
      }),
      this.listEpisodes(scope, anyOfFilter('sessionId', [sessionId]), SESSION_EPISODES),
    ]);
    const thread = resolveCurrentThread(
      sessionId,
      turns.map((doc) => turnFromSource(doc.source)),
      sessionEpisodes,
    );
    const query = clipQuery(input.query?.trim() || thread.turns[0]?.text.trim() || '');
    const phase = input.phase;
    const [memories, recipes, workStates, linkedEpisodes] = await Promise.all([
      // With the session: its own notes (the scratchpad tier) are memories of its context too.
      this.recallMemories(scope, query, phase, this.config.context.maxMemories, [], sessionId),
      this.recallMemories(
        scope,
        query,
        phase,
        this.config.context.maxRecipes,
        ['workflow_recipe'],
        sessionId,
      ),
      this.linkedWorkStates(scope, sessionId, thread, sessionEpisodes),
      this.linkedEpisodes(scope, query, thread.linkedEpisodeIds, thread.channel === 'implicit'),
    ]);
    return assembleContext(
      {
        scope,
        threadId: thread.threadId,
        channel: thread.channel,
        currentThread: thread.turns,
        linkedEpisodes,
        memories,
        workStates: workStates.candidates,
        workStateAnchor: workStates.anchor,
        recipes,
        tokenBudget: input.tokenBudget,
      },
      this.config,
    );
  }

  /** Workflow recipes matching a task description (seed 002 §7): never stale ones. */
  async workflowRecipes(input: WorkflowRecipeInput): Promise<RankedMemory[]> {
    const scope = requireScope(input);
    const task = input.taskDescription?.trim() ?? '';
    if (task === '') throw new InvalidRecallRequestError('taskDescription', 'is required');
    const limit = optionalCount(input.limit, 'limit') || this.config.context.maxRecipes;
    return this.recallMemories(scope, task, input.phase, limit, ['workflow_recipe']);
  }

  /**
   * Non-stale memories recalled for the query (none without a query), ranked as Recall ranks;
   * with a session, its notes among them.
   */
  private async recallMemories(
    scope: RecallScope,
    query: string,
    phase: string | undefined,
    k: number,
    memoryTypes: MemoryType[] = [],
    sessionId: string | null = null,
  ): Promise<RankedMemory[]> {
    if (query === '' || k === 0) return [];
    const answer = await this.recall.recall({
      ...scope,
      query,
      phase,
      k,
      tier: 'memories',
      memoryTypes,
      excludeStale: true,
      sessionId,
    });
    return answer.results.flatMap((hit) => (hit.tier === 'memories' ? [hit.memory] : []));
  }

  /**
   * The work states the session may see (issue #20): its own, its thread's (an explicit thread
   * can span sessions, so the thread's episodes of other sessions are read too), its work
   * units' and its linked threads' — never another session's otherwise. The store narrows, the
   * core decides (workStateLink).
   */
  private async linkedWorkStates(
    scope: RecallScope,
    sessionId: string,
    thread: CurrentThread,
    sessionEpisodes: readonly Episode[],
  ): Promise<{ anchor: WorkStateAnchor; candidates: Memory[] }> {
    const threadEpisodes = await this.listEpisodes(
      scope,
      anyOfFilter('threadId', [thread.threadId]),
      SESSION_EPISODES,
    );
    const anchor = workStateAnchor(sessionId, thread, [...sessionEpisodes, ...threadEpisodes]);
    const listed = await this.store.list<MemoryDocument>('memories', {
      scope,
      filter: workStateFilters(anchor),
      size: WORK_STATE_CANDIDATES,
    });
    return { anchor, candidates: listed.map((doc) => memoryFromSource(doc.source)) };
  }

  /**
   * Episodes of other threads to bring back: those the current thread's episodes link to and, in
   * an implicit channel (seed 004 §3.2: aggressive cross-thread pulling), the ones most related
   * to the query. The assembler drops the current thread's own and applies the channel's limit.
   */
  private async linkedEpisodes(
    scope: RecallScope,
    query: string,
    linkedIds: readonly string[],
    implicit: boolean,
  ): Promise<Episode[]> {
    const [linked, related] = await Promise.all([
      linkedIds.length === 0
        ? Promise.resolve([])
        : this.listEpisodes(scope, anyOfFilter('episodeId', linkedIds), linkedIds.length),
      implicit && query !== '' ? this.relatedEpisodes(scope, query) : Promise.resolve([]),
    ]);
    return [...linked, ...related];
  }

  private async relatedEpisodes(scope: RecallScope, query: string): Promise<Episode[]> {
    const answer = await this.recall.recall({
      ...scope,
      query,
      k: RELATED_EPISODES,
      tier: 'episodes',
    });
    return answer.results.flatMap((hit) =>
      hit.tier === 'episodes' && hit.score.relevance > RELATED_EPISODE_MIN_RELEVANCE
        ? [hit.episode]
        : [],
    );
  }

  private async listEpisodes(scope: RecallScope, filter: StoreFilter, size: number) {
    const listed = await this.store.list<EpisodeDocument>('episodes', {
      scope,
      filter: [...episodeFilters(undefined), filter],
      size,
    });
    return listed.map((doc) => episodeFromSource(doc.source));
  }
}

/** A proto count: 0 or absent means "the default" (undefined); negative or fractional is refused. */
export function optionalCount(value: number | undefined, field: string): number | undefined {
  if (value === undefined || value === 0) return undefined;
  if (!Number.isInteger(value) || value < 0 || value > 100) {
    throw new InvalidRecallRequestError(field, `must be a whole number in 0..100, got ${value}`);
  }
  return value;
}

/** A turn used as the query may be long; a query is at most MAX_RECALL_QUERY_CHARS. */
function clipQuery(text: string): string {
  return text.length <= MAX_RECALL_QUERY_CHARS ? text : text.slice(-MAX_RECALL_QUERY_CHARS);
}
