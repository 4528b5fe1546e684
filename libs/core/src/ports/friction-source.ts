import type { ConfigRepairRow } from '../friction/config-drift';
import type { FailurePatternRow } from '../friction/recurring-failures';
import type { RecipeRow } from '../friction/missing-skills';
import type { CorrectionRow } from '../friction/repeated-corrections';
import type { FrictionSettings } from '../friction/friction-settings';
import type { StaleMemoryRow } from '../friction/stale-memories';
import type { RetryLoopRow } from '../friction/tool-misuse';
import type {
  FrictionDayCount,
  FrictionScope,
  FrictionTotals,
  FrictionWindow,
} from '../friction/friction-types';

/**
 * The friction report's reads (SPEC §9): the aggregated rows its detectors take, computed where
 * the data lives — SQL over the event log in embedded mode (libs/embedded
 * SqliteFrictionSource), Elasticsearch aggregations over the indexed user turns, tool calls and
 * memories in distributed mode (libs/elasticsearch) — never by loading every event into the
 * process. One
 * contract suite (ports/testing/friction-source.contract.ts) runs on both.
 *
 * Methods may answer synchronously (SQLite) or with a promise (a server): the report awaits both.
 */
export type MaybePromise<T> = T | Promise<T>;

/** The signals a source reads, each feeding one detector or the report's frame. */
export const FRICTION_SIGNALS = [
  'totals',
  'failure-patterns',
  'failure-cost',
  'retry-loops',
  'failure-timeline',
  'corrections',
  'stale-memories',
  'config-repairs',
  'recipes',
] as const;
export type FrictionSignal = (typeof FRICTION_SIGNALS)[number];

/**
 * A signal a source cannot give as the embedded report does, and why — shown in the report
 * ("not available in distributed mode") instead of being faked. `partial`: the signal is there
 * but narrower (the reason says how); otherwise it is missing.
 */
export interface FrictionSignalGap {
  signal: FrictionSignal;
  partial: boolean;
  reason: string;
}

/** Where the corrections are streamed (CorrectionClusters). */
export interface CorrectionSink {
  add(row: CorrectionRow): void;
}

export interface FrictionSource {
  /** Which mode the rows come from (the report names it beside the gaps). */
  readonly mode: 'embedded' | 'distributed';
  /** Signals this source cannot give fully (empty: none). */
  gaps(): readonly FrictionSignalGap[];
  /** Sessions and events of the agents in the window and scope (the refusal rule). */
  totals(window: FrictionWindow, scope: FrictionScope): MaybePromise<FrictionTotals>;
  /** Error patterns per project whose tenant-wide cluster reaches `minSessionsPerFinding`. */
  failurePatterns(
    window: FrictionWindow,
    scope: FrictionScope,
    settings: FrictionSettings,
  ): MaybePromise<FailurePatternRow[]>;
  /** Retry habits: commands failing `minRetries` times in one turn, in enough sessions. */
  retryLoops(
    window: FrictionWindow,
    scope: FrictionScope,
    settings: FrictionSettings,
  ): MaybePromise<RetryLoopRow[]>;
  /** Failed calls per day that belong to a recurring pattern or a retry habit. */
  failureTimeline(
    window: FrictionWindow,
    scope: FrictionScope,
    settings: FrictionSettings,
  ): MaybePromise<FrictionDayCount[]>;
  /**
   * Streams the users' corrections and rules of the window and scope into `sink`, in time order
   * (then event id); returns how many.
   */
  corrections(
    window: FrictionWindow,
    scope: FrictionScope,
    sink: CorrectionSink,
  ): MaybePromise<number>;
  /** Stale memories served after they went stale, within the window. */
  staleMemories(window: FrictionWindow, scope: FrictionScope): MaybePromise<StaleMemoryRow[]>;
  /**
   * Configuration drift: successful repairs (configRepairOf) paired with the failed call before
   * them in the same turn, grouped by repair and error pattern, those in `minDriftSessions`
   * sessions. Optional: a source without it is reported as a gap.
   */
  configRepairs?(
    window: FrictionWindow,
    scope: FrictionScope,
    settings: FrictionSettings,
  ): MaybePromise<ConfigRepairRow[]>;
  /**
   * Missing skills: runs of `minRecipeSteps`..`maxRecipeSteps` consecutive calls of one turn
   * (recipeStepOf) with `minRecipeCommands` commands, grouped per project, those in
   * `minRecipeSessions` sessions. Optional: a source without it is reported as a gap.
   */
  recipes?(
    window: FrictionWindow,
    scope: FrictionScope,
    settings: FrictionSettings,
  ): MaybePromise<RecipeRow[]>;
  close(): MaybePromise<void>;
}
