import type { Episode, Memory } from '@engram/contracts';
import type { ChannelKind, ContextItemKind } from './context-types';
import { mayInject, supersededIdsIn } from './injection-guard';
import { compareText } from './ordering';
import { episodeProvenance, memoryProvenance, type Provenance } from './provenance';
import type { RankingConfig } from './ranking-config';
import { inScope, type RecallScope } from './recall-scope';
import type { RankedMemory } from './rank-memories';
import type { ScoreComponents } from './score-components';
import { episodeTitle } from './topic-replay';
import { latestWorkState, type WorkStateAnchor } from './work-state-scope';

/** A user turn of the current thread (the `engram-turns` tier: redacted prompts). */
export interface ThreadTurn {
  tenantId: string;
  projectId: string;
  eventId: string;
  sessionId: string;
  promptId: number;
  threadId: string;
  episodeId: string | null;
  text: string;
  timestamp: number;
}

/** A candidate for the context, before citations and the budget. */
export interface ContextSource {
  kind: ContextItemKind;
  sourceId: string;
  text: string;
  score: ScoreComponents | null;
  provenance: Provenance;
  /** The memory's related files (memories, work states, recipes). */
  relatedFiles?: readonly string[];
}

export interface ContextSourcesInput {
  scope: RecallScope;
  threadId: string;
  channel: ChannelKind;
  currentThread: readonly ThreadTurn[];
  linkedEpisodes: readonly Episode[];
  memories: readonly RankedMemory[];
  /** Work-state candidates; only those linked to `workStateAnchor` are shown. */
  workStates: readonly Memory[];
  /** The asking session in its thread: whose work states it may see (work-state-scope.ts). */
  workStateAnchor: WorkStateAnchor;
  recipes: readonly RankedMemory[];
}

/**
 * Candidates per kind, each list in the order the budget should consider it: the current thread
 * newest first (the budget keeps a contiguous recent tail), the others best first. Everything is
 * scope-checked again; each source appears once across kinds. Assembled context is put in front
 * of the agent without it asking for any particular memory, so it counts as proactive: stale or
 * superseded memories, recipes and work states are left out (SPEC §7; the one guard of
 * injection-guard.ts), not shown with a warning.
 */
export function contextSources(
  input: ContextSourcesInput,
  config: RankingConfig,
): Record<ContextItemKind, ContextSource[]> {
  const { scope } = input;
  const { context } = config;
  // Every candidate at hand can say that another is superseded (injection-guard.ts).
  const superseded = supersededIdsIn([
    ...input.workStates,
    ...input.memories.map((r) => r.memory),
    ...input.recipes.map((r) => r.memory),
  ]);
  const injectable = (memory: Memory) => inScope(memory, scope) && mayInject(memory, superseded);
  const workState = latestWorkState(input.workStates.filter(injectable), input.workStateAnchor);
  const used = new Set<string>(workState ? [workState.memoryId] : []);
  const recipes = input.recipes
    .filter(
      (r) =>
        injectable(r.memory) &&
        r.memory.memoryType === 'workflow_recipe' &&
        !used.has(r.memory.memoryId),
    )
    .slice(0, context.maxRecipes);
  for (const recipe of recipes) used.add(recipe.memory.memoryId);
  const memories = uniqueRanked(input.memories)
    .filter(
      (r) =>
        injectable(r.memory) &&
        !SECTIONED_TYPES.has(r.memory.memoryType) &&
        !used.has(r.memory.memoryId),
    )
    .slice(0, context.maxMemories);
  const episodeLimit =
    input.channel === 'implicit'
      ? context.maxCrossThreadEpisodes
      : context.explicitChannelCrossThreadEpisodes;
  return {
    current_thread: threadTail(input, context.maxThreadTurns).map(turnSource),
    cross_thread_episode: linkedEpisodes(input, episodeLimit).map((e) =>
      episodeSource(e, input.channel),
    ),
    work_state: workState ? [workStateSource(workState)] : [],
    workflow_recipe: recipes.map(recipeSource),
    memory: memories.map(memorySource),
  };
}

/** work_state and workflow_recipe have sections of their own. */
const SECTIONED_TYPES: ReadonlySet<string> = new Set(['work_state', 'workflow_recipe']);

function threadTail(input: ContextSourcesInput, maxTurns: number): ThreadTurn[] {
  const seen = new Set<string>();
  return input.currentThread
    .filter((turn) => {
      if (
        !inScope(turn, input.scope) ||
        turn.threadId !== input.threadId ||
        seen.has(turn.eventId)
      ) {
        return false;
      }
      seen.add(turn.eventId);
      return true;
    })
    .sort(
      (a, b) =>
        b.timestamp - a.timestamp || b.promptId - a.promptId || compareText(a.eventId, b.eventId),
    )
    .slice(0, maxTurns);
}

function linkedEpisodes(input: ContextSourcesInput, limit: number): Episode[] {
  const seen = new Set<string>();
  return input.linkedEpisodes
    .filter((episode) => {
      const keep =
        inScope(episode, input.scope) &&
        episode.threadId !== input.threadId &&
        !seen.has(episode.episodeId);
      seen.add(episode.episodeId);
      return keep;
    })
    .sort((a, b) => endOf(b) - endOf(a) || compareText(a.episodeId, b.episodeId))
    .slice(0, limit);
}

function turnSource(turn: ThreadTurn): ContextSource {
  return {
    kind: 'current_thread',
    sourceId: turn.eventId,
    text: `User: ${turn.text.trim()}`,
    score: null,
    provenance: {
      tenantId: turn.tenantId,
      projectId: turn.projectId,
      sessionIds: [turn.sessionId],
      episodeIds: turn.episodeId ? [turn.episodeId] : [],
      promptIds: [turn.promptId],
      eventIds: [turn.eventId],
      memoryId: null,
      commitSha: null,
    },
  };
}

/**
 * Seed 004 §3: in implicit channels (no thread picker: the user just carries on) continuity is
 * spelled out — "You were asking about …". In explicit channels the user chose the thread, so
 * a linked episode is only background.
 */
function episodeSource(episode: Episode, channel: ChannelKind): ContextSource {
  const date = new Date(endOf(episode)).toISOString().slice(0, 10);
  const lead = channel === 'implicit' ? 'You were asking about' : 'Earlier related episode:';
  const summary = episode.summary?.trim();
  return {
    kind: 'cross_thread_episode',
    sourceId: episode.episodeId,
    text: `${lead} ${episodeTitle(episode)} (${date}).${summary ? ` ${summary}` : ''}`,
    score: null,
    provenance: episodeProvenance(episode),
  };
}

function workStateSource(memory: Memory): ContextSource {
  const label = memory.workUnitRef?.label ? ` (${memory.workUnitRef.label})` : '';
  return {
    kind: 'work_state',
    sourceId: memory.memoryId,
    text: `Work state${label}: ${memory.content.trim()}`,
    score: null,
    provenance: memoryProvenance(memory),
    relatedFiles: memory.relatedFiles,
  };
}

/** Seed 002 §7 recipe pre-injection text. */
function recipeSource(ranked: RankedMemory): ContextSource {
  const recipe = ranked.memory.workflowRecipe;
  const title = recipe?.taskPattern ?? ranked.content;
  const used = recipe ? ` (used ${recipe.successCount}× successfully)` : '';
  const steps = [...(recipe?.steps ?? [])]
    .sort((a, b) => a.order - b.order)
    .map(
      (step) =>
        `\n  ${step.order}. ${step.description}${step.canonicalFile ? ` (see ${step.canonicalFile})` : ''}`,
    );
  return {
    kind: 'workflow_recipe',
    sourceId: ranked.memory.memoryId,
    text: `Recipe: ${title}${used}${steps.join('')}`,
    score: ranked.score,
    provenance: ranked.provenance,
    relatedFiles: ranked.memory.relatedFiles,
  };
}

function memorySource(ranked: RankedMemory): ContextSource {
  return {
    kind: 'memory',
    sourceId: ranked.memory.memoryId,
    text: `${ranked.memory.memoryType}: ${ranked.content.trim()}`,
    score: ranked.score,
    provenance: ranked.provenance,
    relatedFiles: ranked.memory.relatedFiles,
  };
}

function uniqueRanked(memories: readonly RankedMemory[]): RankedMemory[] {
  const seen = new Set<string>();
  return memories.filter((ranked) => {
    if (seen.has(ranked.memory.memoryId)) return false;
    seen.add(ranked.memory.memoryId);
    return true;
  });
}

function endOf(episode: Episode): number {
  return episode.endedAt ?? episode.startedAt;
}
