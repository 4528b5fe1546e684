import type {
  QaIssue,
  SessionEnded,
  SubtaskValidated,
  ValidationFailed,
  ValidationPassed,
} from '@engram/contracts';
import type { ObserverSettings } from './observer-settings';
import { firstDelivery, touch, type Scratchpad, type ScratchpadSegment } from './scratchpad';
import type { ScratchpadCommit, ScratchpadNote, ScratchpadQaIssue } from './scratchpad-records';
import { digestSignals } from './segment-digest';
import type { DeadEndSignal, ObserverSignal } from './signals';

export type PromotionReason =
  'validation_passed' | 'subtask_validated' | 'validation_failed' | 'session_ended' | 'expired';

/** What to promote now: these segments (and pending QA issues), validated or not. */
export interface PromotionTrigger {
  reason: PromotionReason;
  validated: boolean;
  segmentIds: number[];
  /** Run the consolidation pass after this promotion (spec of ≥ 10 subtasks). */
  consolidate: boolean;
}

/**
 * A subtask's verdict closes the open segment as that subtask's. Succeeded: validated, and
 * promoted at once when the spec has more than `incrementalPromotionAboveSubtasks` (5)
 * subtasks — a 40-subtask spec failing at subtask 38 keeps the 37 before it. Failed: the
 * attempt is discarded (its dead ends kept); the fix produces its own segment.
 */
export function onSubtaskValidated(
  pad: Scratchpad,
  event: SubtaskValidated,
  settings: ObserverSettings,
): PromotionTrigger[] {
  if (!firstDelivery(pad, event.eventId)) return [];
  touch(pad, event.sessionId, event.timestamp);
  pad.subtaskCount = event.subtaskCount ?? pad.subtaskCount;
  const segment = closeOpenSegment(pad, event.timestamp);
  if (segment !== null) segment.workUnitRef = event.workUnitRef;
  if (!event.succeeded) {
    if (segment !== null) discard(pad, [segment]);
    return [];
  }
  pad.everValidated = true;
  const subtask = event.workUnitRef.hierarchy.join('/');
  if (!pad.validatedSubtasks.includes(subtask)) pad.validatedSubtasks.push(subtask);
  if (segment === null) return [];
  segment.status = 'validated';
  const incremental = (pad.subtaskCount ?? 0) > settings.incrementalPromotionAboveSubtasks;
  return incremental
    ? [
        {
          reason: 'subtask_validated',
          validated: true,
          segmentIds: [segment.segmentId],
          consolidate: false,
        },
      ]
    : [];
}

/** Final QA passed: everything not yet promoted and not failed is promoted as validated. */
export function onValidationPassed(
  pad: Scratchpad,
  event: ValidationPassed,
  settings: ObserverSettings,
): PromotionTrigger[] {
  if (!firstDelivery(pad, event.eventId)) return [];
  touch(pad, event.sessionId, event.timestamp);
  addQaIssues(pad, event, event.issues);
  closeOpenSegment(pad, event.timestamp);
  pad.everValidated = true;
  const segments = pad.segments.filter((s) => s.status === 'open' || s.status === 'validated');
  for (const segment of segments) segment.status = 'validated';
  const subtasks = Math.max(pad.subtaskCount ?? 0, pad.validatedSubtasks.length);
  const consolidate = !pad.consolidated && subtasks >= settings.consolidationMinSubtasks;
  return [
    {
      reason: 'validation_passed',
      validated: true,
      segmentIds: segments.map((s) => s.segmentId),
      consolidate,
    },
  ];
}

/**
 * QA failed: nothing held is promoted (seed 002 §5: only the final passing state promotes);
 * the scratchpad's unpromoted segments are discarded, their dead ends kept. The QA report's
 * critical/high issues are promoted now, as error patterns (seed 002 §8 reflexion).
 */
export function onValidationFailed(pad: Scratchpad, event: ValidationFailed): PromotionTrigger[] {
  if (!firstDelivery(pad, event.eventId)) return [];
  touch(pad, event.sessionId, event.timestamp);
  closeOpenSegment(pad, event.timestamp);
  discard(
    pad,
    pad.segments.filter((s) => s.status === 'open' || s.status === 'validated'),
  );
  addQaIssues(pad, event, event.issues);
  return pad.qaIssues.length > 0
    ? [{ reason: 'validation_failed', validated: true, segmentIds: [], consolidate: false }]
    : [];
}

/**
 * A session's own scratchpad is promoted when the session ends: validated segments as such, work
 * never validated with lower confidence (needsReview). A work unit's scratchpad waits for its
 * validation (the QA session comes later) or for `expireIdle`.
 */
export function onSessionEnded(pad: Scratchpad, event: SessionEnded): PromotionTrigger[] {
  if (!firstDelivery(pad, event.eventId)) return [];
  touch(pad, event.sessionId, event.timestamp);
  if (!pad.endedSessionIds.includes(event.sessionId)) pad.endedSessionIds.push(event.sessionId);
  return pad.workUnitRoot === null ? remainingTriggers(pad, event.timestamp, 'session_ended') : [];
}

/** A scratchpad idle for `scratchpadIdleMs` is promoted as if its last session had ended. */
export function expireIdle(
  pad: Scratchpad,
  now: number,
  settings: ObserverSettings,
): PromotionTrigger[] {
  if (now - pad.lastActivityAt < settings.scratchpadIdleMs) return [];
  return remainingTriggers(pad, now, 'expired');
}

/** The inputs of one promotion: the trigger's segments, pending QA issues, carried dead ends. */
export function promotableOf(
  pad: Scratchpad,
  trigger: PromotionTrigger,
): {
  signals: ObserverSignal[];
  notes: ScratchpadNote[];
  qaIssues: ScratchpadQaIssue[];
  commits: ScratchpadCommit[];
} {
  const segments = pad.segments.filter((s) => trigger.segmentIds.includes(s.segmentId));
  const carried: DeadEndSignal[] =
    trigger.reason === 'validation_failed' ? [] : pad.carriedDeadEnds;
  return {
    signals: [...segments.flatMap((s) => s.signals), ...carried],
    notes: segments.flatMap((s) => s.notes),
    qaIssues: [...pad.qaIssues],
    commits: [...pad.commits],
  };
}

/** After the trigger's memories were written: segments digested, counters moved on. */
export function markPromoted(
  pad: Scratchpad,
  trigger: PromotionTrigger,
  promotedCount: number,
  moduleDepth: number,
): void {
  for (const segment of pad.segments) {
    if (!trigger.segmentIds.includes(segment.segmentId)) continue;
    segment.status = 'promoted';
    segment.digest = digestSignals(segment.signals, moduleDepth);
    segment.signals = [];
    segment.notes = [];
  }
  if (trigger.reason !== 'validation_failed') pad.carriedDeadEnds = [];
  pad.qaIssues = [];
  pad.promotedCount += promotedCount;
}

function remainingTriggers(
  pad: Scratchpad,
  at: number,
  reason: PromotionReason,
): PromotionTrigger[] {
  closeOpenSegment(pad, at);
  const validated = pad.segments.filter((s) => s.status === 'validated').map((s) => s.segmentId);
  const triggers: PromotionTrigger[] = [];
  if (validated.length > 0) {
    triggers.push({ reason, validated: true, segmentIds: validated, consolidate: false });
  }
  const never = pad.segments.filter((s) => s.status === 'open').map((s) => s.segmentId);
  if (never.length > 0 || pad.carriedDeadEnds.length > 0) {
    triggers.push({ reason, validated: false, segmentIds: never, consolidate: false });
  }
  return triggers;
}

/** Closes the open segment (status stays 'open' until a verdict sets it); null when none. */
function closeOpenSegment(pad: Scratchpad, at: number): ScratchpadSegment | null {
  const last = pad.segments[pad.segments.length - 1];
  if (last === undefined || last.status !== 'open' || last.closedAt !== null) return null;
  last.closedAt = at;
  return last;
}

function discard(pad: Scratchpad, segments: readonly ScratchpadSegment[]): void {
  for (const segment of segments) {
    pad.carriedDeadEnds.push(
      ...segment.signals.filter((s): s is DeadEndSignal => s.type === 'dead_end'),
    );
    segment.status = 'failed';
    segment.signals = [];
    segment.notes = [];
  }
}

function addQaIssues(
  pad: Scratchpad,
  event: ValidationPassed | ValidationFailed,
  issues: readonly QaIssue[],
): void {
  for (const issue of issues) {
    pad.qaIssues.push({
      ...issue,
      eventId: event.eventId,
      sessionId: event.sessionId,
      at: event.timestamp,
      workUnitRef: event.workUnitRef,
    });
  }
}
