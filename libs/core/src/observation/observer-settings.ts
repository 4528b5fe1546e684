import { MisconfigurationError } from '../errors/engram-error';
import type { ToolKind } from './tool-kinds';

/** The signal types whose counts the promotion's frequency stage checks (SPEC §5). */
export type ThresholdSignal =
  | 'file_access'
  | 'co_access'
  | 'error_retry'
  | 'backtrack'
  | 'sequence'
  | 'time_anomaly'
  | 'dead_end'
  /** Critical/high issues of a QA report: a confirmed failure, one is enough. */
  | 'qa_failure'
  /** The agent's own remember_this: explicit, one is enough. */
  | 'remember'
  /** What a QA agent's browser tools showed (seed 002 §9 stores each one, to be reviewed). */
  | 'e2e_observation'
  /** Per-session statistics (context cost, calibration): their rules set the sample floor. */
  | 'session_stats';

export type ComplexityCaps = Readonly<Record<'trivial' | 'standard' | 'complex', number>>;

/**
 * Every threshold of the observer in one place. Defaults are the numbers of SPEC §5 and seed
 * 002 §5/§8; the ones the seed leaves open are marked "chosen" with the reason.
 */
export interface ObserverSettings {
  /** Directory segments that make a module: depth 2 → `src/auth/token.ts` is in `src/auth`. */
  moduleDepth: number;
  /** Overrides of the tool-name classification, by exact tool name. */
  toolKinds: Readonly<Record<string, ToolKind>>;
  coAccessWindowSteps: number;
  backtrackWindowSteps: number;
  timeAnomalyReads: number;
  /** n-gram lengths of the sequence signal (chosen: 4–6; recipes need 4+ steps). */
  sequenceLengths: readonly number[];
  /** A reverted approach this long is the seed's "20+ steps then a different approach". */
  deadEndMinSteps: number;
  /** Chosen: 80 % of the observed orderings of a pair one way (the seed's "almost always"). */
  directionalShare: number;
  /** Chosen: fewer ordered observations than this never make a pair directional. */
  directionalMinSamples: number;
  causalDependencyMinSessions: number;
  errorPatternMinOccurrences: number;
  prefetchAlwaysShare: number;
  prefetchFrequentShare: number;
  /** Chosen: a share of one or two sessions is noise. */
  prefetchMinSessions: number;
  /** The last sessions of a module that context cost and prefetch look at. */
  moduleWindowSessions: number;
  /** Chosen: an average and a p90 of fewer samples say nothing. */
  contextCostMinSessions: number;
  taskCalibrationMinSessions: number;
  recipeMinSessions: number;
  recipeWindowMs: number;
  frequencyThresholds: Readonly<Record<ThresholdSignal, number>>;
  /** A candidate this close (cosine) to an existing memory is a duplicate. */
  noveltyMaxCosine: number;
  scoreThreshold: number;
  deadEndScoreThreshold: number;
  /** Chosen: evidence two weeks old counts half in the recency term. */
  recencyHalfLifeDays: number;
  promotionCaps: ComplexityCaps;
  /** Specs with more subtasks than this promote per validated subtask (seed 002 §8: 5). */
  incrementalPromotionAboveSubtasks: number;
  consolidationMinSubtasks: number;
  /** Chosen: memories of sessions that never validated keep 60 % of their confidence. */
  unvalidatedConfidenceFactor: number;
  /** Chosen: a work-unit scratchpad idle this long is promoted as never validated. */
  scratchpadIdleMs: number;
  /** Sessions kept in the project statistics (bounded: they live in one state record). */
  maxSessionSummaries: number;
  /**
   * How long (stream time after its last activity) an ended session's event ids are kept, so its
   * events published again (a hook's spool re-sending, a re-import) are ignored as duplicates.
   * Chosen: a week, well past any retry of the hook's spool, and inside the 30 days the hook keeps
   * a session's counters (a session resumed later gets new ids either way).
   */
  endedSessionRetentionMs: number;
  /**
   * Event ids kept per session (live or ended); beyond it the oldest go, and an unknown event
   * older than the newest dropped one counts as a duplicate. Chosen: a long Claude Code session
   * has a few thousand events; 5 000 uuids and times are ~270 KB, well inside a Kafka record.
   */
  maxSessionEventIds: number;
  /**
   * work_unit_outcome memories idle this many days (since the verdict that closed the work unit)
   * are pruned by the observer itself, as `engram memory prune` prunes them (seed 002 §13: 90 days
   * post-merge); 0 disables it.
   */
  workUnitOutcomeRetentionDays: number;
}

const DAY = 24 * 60 * 60 * 1000;

export const DEFAULT_OBSERVER_SETTINGS: Readonly<ObserverSettings> = Object.freeze({
  moduleDepth: 2,
  toolKinds: {},
  coAccessWindowSteps: 3,
  backtrackWindowSteps: 5,
  timeAnomalyReads: 4,
  sequenceLengths: [4, 5, 6],
  deadEndMinSteps: 20,
  directionalShare: 0.8,
  directionalMinSamples: 3,
  causalDependencyMinSessions: 3,
  errorPatternMinOccurrences: 3,
  prefetchAlwaysShare: 0.8,
  prefetchFrequentShare: 0.5,
  prefetchMinSessions: 3,
  moduleWindowSessions: 30,
  contextCostMinSessions: 3,
  taskCalibrationMinSessions: 3,
  recipeMinSessions: 3,
  recipeWindowMs: 30 * DAY,
  frequencyThresholds: {
    file_access: 3,
    co_access: 2,
    error_retry: 2,
    backtrack: 2,
    dead_end: 1,
    sequence: 3,
    time_anomaly: 1,
    qa_failure: 1,
    remember: 1,
    e2e_observation: 1,
    session_stats: 1,
  },
  noveltyMaxCosine: 0.88,
  scoreThreshold: 0.6,
  deadEndScoreThreshold: 0.3,
  recencyHalfLifeDays: 14,
  promotionCaps: { trivial: 2, standard: 10, complex: 25 },
  incrementalPromotionAboveSubtasks: 5,
  consolidationMinSubtasks: 10,
  unvalidatedConfidenceFactor: 0.6,
  scratchpadIdleMs: 7 * DAY,
  maxSessionSummaries: 500,
  endedSessionRetentionMs: 7 * DAY,
  maxSessionEventIds: 5_000,
  workUnitOutcomeRetentionDays: 90,
});

/** The defaults with overrides; impossible values fail here, with the fix in the message. */
export function observerSettings(overrides: Partial<ObserverSettings> = {}): ObserverSettings {
  const settings = { ...DEFAULT_OBSERVER_SETTINGS, ...overrides };
  if (!Number.isInteger(settings.moduleDepth) || settings.moduleDepth < 1) {
    throw new MisconfigurationError(
      `observer moduleDepth must be an integer >= 1, got ${settings.moduleDepth}`,
    );
  }
  if (settings.sequenceLengths.some((n) => !Number.isInteger(n) || n < 2)) {
    throw new MisconfigurationError(
      `observer sequenceLengths must be integers >= 2, got [${settings.sequenceLengths.join(', ')}]`,
    );
  }
  if (!Number.isFinite(settings.endedSessionRetentionMs) || settings.endedSessionRetentionMs < 0) {
    throw new MisconfigurationError(
      `observer endedSessionRetentionMs must be a duration in ms >= 0, got ${settings.endedSessionRetentionMs}`,
    );
  }
  if (!Number.isInteger(settings.maxSessionEventIds) || settings.maxSessionEventIds < 1) {
    throw new MisconfigurationError(
      `observer maxSessionEventIds must be an integer >= 1, got ${settings.maxSessionEventIds}`,
    );
  }
  if (
    !Number.isInteger(settings.workUnitOutcomeRetentionDays) ||
    settings.workUnitOutcomeRetentionDays < 0
  ) {
    throw new MisconfigurationError(
      `observer workUnitOutcomeRetentionDays must be an integer >= 0 (0: never pruned), got ${settings.workUnitOutcomeRetentionDays}`,
    );
  }
  return settings;
}
