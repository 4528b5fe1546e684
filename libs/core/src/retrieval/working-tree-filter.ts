import type { Memory } from '@engram/contracts';
import { renderContext } from './context-assembly';
import type { ContextItem } from './context-types';
import { SUPERSEDED_PREFIX } from '../memory/superseded';
import { renderInjection } from './proactive-injection';
import { DEFAULT_RANKING_CONFIG } from './ranking-config';
import { checkWorkingTree, type WorkingTreeCheckOptions } from './working-tree-check';

/**
 * What an agent-side caller injects once the working tree was checked (working-tree-check.ts):
 * the answer of BuildContext or InjectForFile without the items whose every related file is gone,
 * re-rendered with the service's own renderers so the text reads as the service would have
 * written it. An answer with nothing gone is returned as it came (same text, no re-render).
 */

export type CheckedContextItem = Pick<ContextItem, 'citationId' | 'kind' | 'text' | 'relatedFiles'>;

export interface CheckedContext<I extends CheckedContextItem = CheckedContextItem> {
  items: readonly I[];
  rendered: string;
}

export interface CheckedInjection<M extends InjectedMemory = InjectedMemory> {
  memories: readonly M[];
  rendered: string;
}

export interface InjectedMemory {
  memory: Pick<Memory, 'memoryId' | 'memoryType' | 'relatedFiles'>;
  /** The text as the service presented it. */
  content: string;
}

export interface WorkingTreeFiltered<T> {
  answer: T;
  /** Ids left out (context: citation ids; injection: memory ids). */
  gone: string[];
  stats: number;
}

/** BuildContext's answer without the items about files that are all gone. */
export function contextInWorkingTree<I extends CheckedContextItem>(
  context: CheckedContext<I>,
  options: WorkingTreeCheckOptions,
): WorkingTreeFiltered<CheckedContext<I>> {
  const verdict = checkWorkingTree(
    context.items.map((item) => ({
      memoryId: item.citationId,
      relatedFiles: [...(item.relatedFiles ?? [])],
    })),
    options,
  );
  if (verdict.gone.size === 0) return { answer: context, gone: [], stats: verdict.stats };
  const items = context.items.filter((item) => !verdict.gone.has(item.citationId));
  return {
    answer: { ...context, items, rendered: renderContext(items) },
    gone: [...verdict.gone],
    stats: verdict.stats,
  };
}

/** InjectForFile's answer without the memories about files that are all gone. */
export function injectionInWorkingTree<M extends InjectedMemory>(
  selection: CheckedInjection<M>,
  options: WorkingTreeCheckOptions,
): WorkingTreeFiltered<CheckedInjection<M>> {
  const verdict = checkWorkingTree(
    selection.memories.map((injected) => injected.memory),
    options,
  );
  if (verdict.gone.size === 0) return { answer: selection, gone: [], stats: verdict.stats };
  const memories = selection.memories.filter((m) => !verdict.gone.has(m.memory.memoryId));
  return {
    answer: { ...selection, memories, rendered: renderInjection(memories) },
    gone: [...verdict.gone],
    stats: verdict.stats,
  };
}

/** A search result as the check needs it: the memory behind it (if any) and its display text. */
export interface CheckedRecallResult {
  memory?: Pick<Memory, 'memoryId' | 'relatedFiles'> | null;
  text: string;
}

/**
 * An explicit search (the agent asked) still shows a memory about files that are all gone, but
 * marked as SPEC §7 marks stale memories, so nobody acts on it unawares. Order is kept.
 */
export function recallInWorkingTree<R extends CheckedRecallResult>(
  results: readonly R[],
  options: WorkingTreeCheckOptions,
  stalePrefix: string = DEFAULT_RANKING_CONFIG.stale.prefix,
): WorkingTreeFiltered<R[]> {
  const verdict = checkWorkingTree(
    results.flatMap((result) => (result.memory ? [result.memory] : [])),
    options,
  );
  const answer = results.map((result) =>
    result.memory && verdict.gone.has(result.memory.memoryId) && !isMarked(result.text, stalePrefix)
      ? { ...result, text: `${stalePrefix} ${result.text}` }
      : result,
  );
  return { answer, gone: [...verdict.gone], stats: verdict.stats };
}

/** Already stale on the service (a stale or superseded prefix): not marked twice. */
function isMarked(text: string, stalePrefix: string): boolean {
  return text.startsWith(stalePrefix) || text.startsWith(SUPERSEDED_PREFIX);
}
