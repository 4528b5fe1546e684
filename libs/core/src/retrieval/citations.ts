import type { ContextItemKind } from './context-types';

const PREFIX: Readonly<Record<ContextItemKind, string>> = {
  current_thread: 'turn',
  cross_thread_episode: 'ep',
  memory: 'mem',
  work_state: 'ws',
  workflow_recipe: 'recipe',
};

/** Leading characters of the source id kept in a citation: a uuid's first group. */
const SHORT_LENGTH = 8;

/**
 * Citation ids for context items: `<kind prefix>-<first 8 characters of the source id>` (seed
 * 002 cites memories by `id.slice(0, 8)`, so a person can quote it back in feedback). The same
 * source always gets the same citation; when two sources in one context share the short form,
 * both fall back to the full id, so citations stay unique and independent of item order.
 */
export function assignCitationIds(
  sources: readonly { kind: ContextItemKind; sourceId: string }[],
): string[] {
  const short = sources.map(
    ({ kind, sourceId }) => `${PREFIX[kind]}-${sourceId.slice(0, SHORT_LENGTH)}`,
  );
  const owners = new Map<string, Set<string>>();
  sources.forEach(({ kind, sourceId }, index) => {
    const key = short[index];
    const set = owners.get(key) ?? new Set<string>();
    set.add(`${kind}:${sourceId}`);
    owners.set(key, set);
  });
  return sources.map(({ kind, sourceId }, index) =>
    (owners.get(short[index])?.size ?? 0) > 1 ? `${PREFIX[kind]}-${sourceId}` : short[index],
  );
}
