import type { MemoryFilter } from './memory-filter';
import type { RankingConfig } from './ranking-config';
import { rankMemories, type RankedMemory, type RankMemoriesInput } from './rank-memories';
import { requireScope, type RecallScope } from './recall-scope';

/**
 * Workflow recipes matched to a task description at planning time (seed 002 §7, GetWorkflowRecipe).
 * The store searches the recipes' task patterns (BM25 + kNN); ranking is the ordinary one. Recipe
 * pre-injection is proactive — the agent did not ask — so, as for file injection, stale recipes
 * (a canonical file changed or vanished) are left out rather than shown with a warning.
 */
export function workflowRecipeFilter(scope: RecallScope): MemoryFilter {
  return { ...requireScope(scope), types: ['workflow_recipe'], stale: 'exclude' };
}

export interface MatchRecipesInput extends Omit<RankMemoriesInput, 'filter' | 'limit'> {
  scope: RecallScope;
  /** 0 or absent: the configured maximum (seed 002: 2). */
  limit?: number;
}

export function matchWorkflowRecipes(
  input: MatchRecipesInput,
  config: RankingConfig,
): RankedMemory[] {
  const { scope, limit, ...search } = input;
  return rankMemories(
    { ...search, filter: workflowRecipeFilter(scope), limit: limit || config.context.maxRecipes },
    config,
  );
}
