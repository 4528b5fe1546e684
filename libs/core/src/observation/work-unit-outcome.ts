import type { LifecycleEvent, WorkUnitRef } from '@engram/contracts';
import type { Scratchpad, ScratchpadSegment } from './scratchpad';
import type { ObserverSignal } from './signals';

/** The verdicts that close a work unit (or one of its subtasks) and so record its outcome. */
export type WorkUnitVerdict = Extract<
  LifecycleEvent,
  { type: 'ValidationPassed' | 'ValidationFailed' | 'SubtaskValidated' }
>;

/**
 * What the observer saw of one work unit up to a verdict (seed 002 §4 `WorkUnitOutcome`): the
 * attempt the verdict judges, and how often earlier attempts were thrown away.
 */
export interface WorkUnitOutcomeFacts {
  tenantId: string;
  projectId: string;
  workUnitRef: WorkUnitRef;
  verdict: WorkUnitVerdict;
  succeeded: boolean;
  /** Files edited in the judged attempt, sorted. */
  filesModified: string[];
  /** The agents' `remember_this` decisions made in the judged attempt, in order. */
  keyDecisions: string[];
  /** Tool calls of the attempt (segments written before calls were counted: their signals'). */
  stepsTaken: number;
  /** Attempts of this work unit discarded before the verdict (failed validations). */
  retryCount: number;
  failureReason: string | null;
  /** The sessions that worked on the attempt (and the verdict's), sorted. */
  sessionIds: string[];
}

/** QA issues severe enough to name as the reason a validation failed. */
const BLOCKING_SEVERITIES = new Set(['critical', 'high']);

/**
 * The outcome a verdict records, read from the work unit's scratchpad BEFORE the verdict is
 * applied to it: applying it closes the judged segments and drops their signals (digested when
 * promoted, discarded when failed). Null when the scratchpad saw the verdict already (a replay,
 * or the same verdict through another session) or when the work has no work unit to name.
 *
 * The judged attempt: for a subtask, the open segment its verdict closes (the subtask's work
 * since the previous verdict); for the whole work unit, every segment not discarded — the open
 * and validated ones and the incrementally promoted ones (through their digests).
 */
export function workUnitOutcomeFacts(
  pad: Scratchpad,
  verdict: WorkUnitVerdict,
): WorkUnitOutcomeFacts | null {
  if (pad.recentEventIds.includes(verdict.eventId)) return null;
  const workUnitRef = verdict.workUnitRef ?? pad.workUnitRoot;
  if (workUnitRef === null || workUnitRef.hierarchy.length === 0) return null;
  const subtask = verdict.type === 'SubtaskValidated';
  const judged = subtask ? segmentClosedBySubtask(pad) : judgedWholeUnit(pad);
  const retried = pad.segments.filter(
    (segment) =>
      segment.status === 'failed' &&
      (!subtask ||
        (segment.workUnitRef !== null && sameWorkUnit(segment.workUnitRef, workUnitRef))),
  );
  const signals = judged.flatMap((segment) => segment.signals);
  const edited = new Set<string>();
  for (const signal of signals) {
    if (signal.type === 'file_access' && signal.access === 'edit') edited.add(signal.filePath);
  }
  for (const segment of judged) {
    for (const file of Object.keys(segment.digest?.edits ?? {})) edited.add(file);
  }
  const sessionIds = new Set([verdict.sessionId, ...signals.map((signal) => signal.sessionId)]);
  const succeeded = succeededOf(verdict);
  return {
    tenantId: verdict.tenantId,
    projectId: verdict.projectId,
    workUnitRef,
    verdict,
    succeeded,
    filesModified: [...edited].sort(),
    keyDecisions: judged
      .flatMap((segment) => segment.notes)
      .filter((note) => note.memoryType === 'decision')
      .map((note) => note.text),
    stepsTaken: judged.reduce((sum, segment) => sum + stepsOf(segment), 0),
    retryCount: retried.length,
    failureReason: succeeded ? null : failureReasonOf(verdict),
    sessionIds: [...sessionIds].sort(),
  };
}

/**
 * The natural key of a work unit's outcome: one memory per work unit, each verdict replaces it.
 * JSON, so ids with separators in them (`a/b` under `x`, `b` under `x/a`) stay apart.
 */
export function workUnitKeyOf(ref: WorkUnitRef): string {
  return `work_unit:${JSON.stringify([ref.methodology, ...ref.hierarchy])}`;
}

function sameWorkUnit(a: WorkUnitRef, b: WorkUnitRef): boolean {
  return workUnitKeyOf(a) === workUnitKeyOf(b);
}

/** The segment a SubtaskValidated closes (as `onSubtaskValidated` picks it): the last, if open. */
function segmentClosedBySubtask(pad: Scratchpad): ScratchpadSegment[] {
  const last = pad.segments[pad.segments.length - 1];
  return last !== undefined && last.status === 'open' && last.closedAt === null ? [last] : [];
}

function judgedWholeUnit(pad: Scratchpad): ScratchpadSegment[] {
  return pad.segments.filter((segment) => segment.status !== 'failed');
}

function stepsOf(segment: ScratchpadSegment): number {
  return segment.calls ?? stepsOfSignals(segment.signals);
}

function succeededOf(verdict: WorkUnitVerdict): boolean {
  switch (verdict.type) {
    case 'ValidationPassed':
      return true;
    case 'ValidationFailed':
      return false;
    case 'SubtaskValidated':
      return verdict.succeeded;
  }
}

/** QA's summary, else its blocking issues, else what is known: that validation failed. */
function failureReasonOf(verdict: WorkUnitVerdict): string {
  if (verdict.type === 'SubtaskValidated') return 'subtask validation failed';
  const summary = verdict.summary?.trim();
  if (summary) return summary;
  const blocking = verdict.issues
    .filter((issue) => BLOCKING_SEVERITIES.has(issue.severity.toLowerCase()))
    .map((issue) => issue.description.trim())
    .filter((description) => description.length > 0);
  return blocking.length > 0 ? blocking.join('; ') : 'validation failed';
}

/** Distinct (session, step) pairs the signals were derived from: the steps they witness. */
function stepsOfSignals(signals: readonly ObserverSignal[]): number {
  return new Set(signals.map((signal) => `${signal.sessionId}\u0000${signal.stepIndex}`)).size;
}
