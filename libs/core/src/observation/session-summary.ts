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
  /**
   * Steps the plan expected: what an orchestrator planned (TaskClassified), else the session's
   * first plan (a tool call's `plannedSteps`, e.g. a TodoWrite).
   */
  plannedSteps: number | null;
  /**
   * Steps of the session's latest plan, when the plan came from its tool calls: the work as it
   * turned out, in the plan's own unit (task_calibration compares it with `plannedSteps`; without
   * it, the tool calls are the actual steps). Optional: summaries kept before it have none.
   */
  latestPlanSteps?: number | null;
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
    // The orchestrator's figure wins over the agent's todo list: it was planned for the work unit
    // before the agent started, an estimate the work did not inform, which is what calibration
    // measures; the agent writes its first todo list after it has looked around.
    plannedSteps:
      state.orchestratorPlannedSteps ?? state.plan?.plannedSteps ?? outcome.plannedSteps ?? null,
    latestPlanSteps: state.plan?.latestSteps ?? null,
    methodology: outcome.methodology ?? null,
    filesAccessed: paths,
    filesEdited: paths.filter((path) => state.files[path].edits > 0),
    modules: [...new Set(paths.map((path) => state.files[path].module))].sort(),
    tokensByModule: { ...state.tokensByModule },
    totalTokens: state.totalTokens,
    sequenceKeys: [...state.sequenceKeysSeen],
  };
}

/**
 * A tool call that wrote the agent's plan: the first plan is what was planned, each later one
 * (a todo list rewritten as work goes on, items added or dropped) what the work turned out to be.
 */
export function notePlan(state: DetectorState, plannedSteps: number | null): void {
  if (!isStepCount(plannedSteps)) return;
  if (state.plan === undefined) state.plan = { plannedSteps, latestSteps: plannedSteps };
  else state.plan.latestSteps = plannedSteps;
}

/**
 * The steps an orchestrator planned for the session's task (TaskClassified). A later
 * classification of the task replaces an earlier one: the orchestrator corrected its estimate.
 */
export function noteOrchestratorPlan(state: DetectorState, plannedSteps: number | null): void {
  if (isStepCount(plannedSteps)) state.orchestratorPlannedSteps = plannedSteps;
}

function isStepCount(steps: number | null): steps is number {
  return steps !== null && Number.isInteger(steps) && steps > 0;
}
