import { assignCitationIds } from './citations';
import { contextSources, type ContextSource, type ContextSourcesInput } from './context-sources';
import type { ContextItem, ContextItemKind } from './context-types';
import type { RankingConfig } from './ranking-config';
import { requireScope } from './recall-scope';
import { InvalidRecallRequestError } from './retrieval-errors';
import { clipToTokens, estimateTokens } from './token-estimate';

/**
 * Context assembly (seed 004 §3, SPEC §7): for a session's turn, the current thread, linked
 * cross-thread episodes ("You were asking about …" in implicit channels), relevant memories, the
 * latest work_state of the session's own work (its session, thread, work unit or a linked thread:
 * never another session's, work-state-scope.ts) and workflow recipes — within a token budget,
 * each item citable.
 *
 * Budgeting is greedy in `context.priority` order. Within a kind, candidates are considered best
 * first; one that does not fit is left out and smaller later ones may still fit — except for the
 * current thread, which keeps a contiguous tail of the most recent turns (a gap in the middle of
 * a conversation misleads more than a shorter history). A section header costs its tokens when
 * the section's first item is admitted. The same input always gives the same context.
 */

export interface ContextAssemblyInput extends ContextSourcesInput {
  /** 0 or absent: the configured default. */
  tokenBudget?: number;
}

export interface AssembledContext {
  /** Admitted items, in display order (the current thread oldest first). */
  items: ContextItem[];
  rendered: string;
  tokensUsed: number;
  tokenBudget: number;
  /** True when some candidate did not fit the budget. */
  truncated: boolean;
  /** Candidates left out for lack of budget, in the order they were considered. */
  omitted: { kind: ContextItemKind; citationId: string; tokens: number }[];
  threadId: string;
}

const HEADERS: Readonly<Record<ContextItemKind, string>> = {
  cross_thread_episode: '## Earlier related conversations',
  work_state: '## Where the work stands',
  workflow_recipe: '## Known workflow recipes',
  memory: '## Relevant memories',
  current_thread: '## Current thread',
};

export function assembleContext(
  input: ContextAssemblyInput,
  config: RankingConfig,
): AssembledContext {
  const scope = requireScope(input.scope);
  if (input.threadId.trim() === '') throw new InvalidRecallRequestError('threadId', 'is required');
  const budget = tokenBudget(input.tokenBudget, config);
  const byKind = contextSources({ ...input, scope }, config);
  const candidates = toItems(byKind, config);
  const admitted = new Map<ContextItemKind, ContextItem[]>();
  const omitted: AssembledContext['omitted'] = [];
  let used = 0;
  for (const kind of config.context.priority) {
    // Once a turn of the thread is left out, older turns are too (no gaps in the conversation).
    let threadCut = false;
    for (const item of candidates.get(kind) ?? []) {
      const section = admitted.get(kind) ?? [];
      const cost = item.tokens + (section.length === 0 ? headerTokens(kind, config) : 0);
      if (threadCut || used + cost > budget) {
        omitted.push({ kind, citationId: item.citationId, tokens: item.tokens });
        threadCut = kind === 'current_thread';
        continue;
      }
      used += cost;
      admitted.set(kind, [...section, item]);
    }
  }
  const items = config.context.displayOrder.flatMap((kind) =>
    displayed(kind, admitted.get(kind) ?? []),
  );
  return {
    items,
    rendered: renderContext(items),
    tokensUsed: used,
    tokenBudget: budget,
    truncated: omitted.length > 0,
    omitted,
    threadId: input.threadId,
  };
}

function tokenBudget(requested: number | undefined, config: RankingConfig): number {
  if (requested === undefined || requested === 0) return config.context.defaultTokenBudget;
  if (!Number.isInteger(requested) || requested < 0) {
    throw new InvalidRecallRequestError(
      'tokenBudget',
      `must be a non-negative integer, got ${requested}`,
    );
  }
  return requested;
}

/** Citations are assigned over every candidate, so an item's id does not depend on the budget. */
function toItems(
  byKind: Record<ContextItemKind, ContextSource[]>,
  config: RankingConfig,
): Map<ContextItemKind, ContextItem[]> {
  const kinds = config.context.priority;
  const sources = kinds.flatMap((kind) => byKind[kind]);
  const citations = assignCitationIds(sources);
  const out = new Map<ContextItemKind, ContextItem[]>();
  sources.forEach((source, index) => {
    const { charsPerToken, maxItemTokens } = config.context;
    const { text, clipped } = clipToTokens(source.text, maxItemTokens, charsPerToken);
    const citationId = citations[index];
    const item: ContextItem = {
      citationId,
      kind: source.kind,
      text,
      tokens: estimateTokens(line(citationId, text), charsPerToken),
      score: source.score,
      provenance: source.provenance,
      clipped,
      ...(source.relatedFiles && { relatedFiles: source.relatedFiles }),
    };
    out.set(source.kind, [...(out.get(source.kind) ?? []), item]);
  });
  return out;
}

/** The thread was budgeted newest first; it reads oldest first. */
function displayed(kind: ContextItemKind, items: ContextItem[]): ContextItem[] {
  return kind === 'current_thread' ? [...items].reverse() : items;
}

/** An item as rendered: citation marker, text, newline (the newline is part of its cost). */
function line(citationId: string, text: string): string {
  return `[${citationId}] ${text}\n`;
}

/** A header with the blank line that separates it from the previous section. */
function headerTokens(kind: ContextItemKind, config: RankingConfig): number {
  return estimateTokens(`\n${HEADERS[kind]}\n`, config.context.charsPerToken);
}

/** The items under their section headers, each line cited (also re-renders a filtered context). */
export function renderContext(
  items: readonly Pick<ContextItem, 'citationId' | 'kind' | 'text'>[],
): string {
  let out = '';
  let current: ContextItemKind | null = null;
  for (const item of items) {
    if (item.kind !== current) {
      current = item.kind;
      out += `\n${HEADERS[item.kind]}\n`;
    }
    out += line(item.citationId, item.text);
  }
  return out.trim();
}
