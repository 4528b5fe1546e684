import type { ObserverSettings } from '../observer-settings';
import type { ProjectObservationStats } from '../project-stats';
import type { ScratchpadNote, ScratchpadQaIssue } from '../scratchpad-records';
import type { ObserverSignal } from '../signals';

/** What the inference rules read. Pure data: the rules never look anything up elsewhere. */
export interface InferenceInput {
  /** The scratchpad signals being promoted, after the validation filter. */
  signals: readonly ObserverSignal[];
  qaIssues: readonly ScratchpadQaIssue[];
  notes: readonly ScratchpadNote[];
  /** The project's statistics (already including these signals, or not: rules take the max). */
  stats: ProjectObservationStats;
  /** Whether these sessions passed validation (they then count as successful for recipes). */
  validated: boolean;
  now: number;
  settings: ObserverSettings;
}
