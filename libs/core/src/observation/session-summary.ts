import type { DetectorState } from './detector-state';

/**
 * What the cross-session rules (prefetch, context cost, calibration, recipes) need to remember
 * of a finished session: small, plain JSON, one per session in the project statistics.
 */
export interface SessionSummary {
  sessionId: string;
  startedAt: number;
  endedAt: number;
  /** true: validated; false: validation failed; null: never validated. */
  succeeded: boolean | null;
  stepCount: number;
  /** Steps the plan expected, when the orchestrator said (no event carries it yet). */
  plannedSteps: number | null;
  methodology: string | null;
  filesAccessed: string[];
  filesEdited: string[];
  modules: string[];
  tokensByModule: Record<string, number>;
  totalTokens: number;
  /** Sequence keys (`module|Tool>…`) the session produced. */
  sequenceKeys: string[];
}

export interface SessionOutcome {
  endedAt: number;
  succeeded: boolean | null;
  plannedSteps?: number | null;
  methodology?: string | null;
}

/** The summary of a detector's session. */
export function summariseSession(state: DetectorState, outcome: SessionOutcome): SessionSummary {
  const paths = Object.keys(state.files).sort();
  return {
    sessionId: state.sessionId,
    startedAt: state.startedAt ?? outcome.endedAt,
    endedAt: Math.max(outcome.endedAt, state.lastAt),
    succeeded: outcome.succeeded,
    stepCount: state.callCount,
    plannedSteps: outcome.plannedSteps ?? null,
    methodology: outcome.methodology ?? null,
    filesAccessed: paths,
    filesEdited: paths.filter((path) => state.files[path].edits > 0),
    modules: [...new Set(paths.map((path) => state.files[path].module))].sort(),
    tokensByModule: { ...state.tokensByModule },
    totalTokens: state.totalTokens,
    sequenceKeys: [...state.sequenceKeysSeen],
  };
}
