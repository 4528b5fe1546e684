import type { Provenance } from './provenance';
import type { ScoreComponents } from './score-components';

/** The kinds of item context assembly produces (seed 004 §3, SPEC §7). */
export const CONTEXT_ITEM_KINDS = [
  'current_thread',
  'cross_thread_episode',
  'memory',
  'work_state',
  'workflow_recipe',
] as const;
export type ContextItemKind = (typeof CONTEXT_ITEM_KINDS)[number];

export type ChannelKind = 'explicit' | 'implicit';

/** One piece of assembled context, citable by `citationId`. */
export interface ContextItem {
  citationId: string;
  kind: ContextItemKind;
  /** The rendered line, without the citation marker. */
  text: string;
  /** Estimated tokens of the line as rendered (citation marker and newline included). */
  tokens: number;
  /** Present for ranked items (memories, recipes). */
  score: ScoreComponents | null;
  provenance: Provenance;
  /** True when the text was cut to `maxItemTokens`. */
  clipped: boolean;
  /**
   * The files a memory, work state or recipe is about (none for conversation items): the
   * agent-side caller checks them against the working tree before injecting (working-tree-check).
   */
  relatedFiles?: readonly string[];
}
