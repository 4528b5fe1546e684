import type { Memory } from '@engram/contracts';

/**
 * How a superseded memory is marked (issue #20; the rule is `supersession.ts`): a leaf module, so
 * that presenting a stale memory (retrieval/stale.ts) needs nothing of the rule.
 */

/** The tag a superseded memory carries, followed by the id of the memory that superseded it. */
export const SUPERSEDED_BY_TAG = 'superseded-by:';
/** What an explicit search shows before a superseded memory's content. */
export const SUPERSEDED_PREFIX = '[SUPERSEDED — a newer memory replaces it]';

/** Whether the memory was superseded (its `superseded-by:` tag). */
export function isSuperseded(memory: Partial<Pick<Memory, 'tags'>>): boolean {
  return (memory.tags ?? []).some((tag) => tag.startsWith(SUPERSEDED_BY_TAG));
}

/** The memory that superseded this one, if any. */
export function supersededBy(memory: Partial<Pick<Memory, 'tags'>>): string | null {
  const tag = (memory.tags ?? []).find((t) => t.startsWith(SUPERSEDED_BY_TAG));
  return tag === undefined ? null : tag.slice(SUPERSEDED_BY_TAG.length);
}
