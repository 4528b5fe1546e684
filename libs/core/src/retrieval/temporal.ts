import { compareText } from './ordering';
import { InvalidRecallRequestError } from './retrieval-errors';

/** The temporal modes of a recall (SPEC §7), as a request states them. Times are epoch millis. */
export type TemporalMode =
  | { mode: 'recent_sessions'; n: number }
  | { mode: 'time_window'; fromMs: number; toMs: number }
  | { mode: 'around_event'; timeMs: number; windowMs: number };

/**
 * A temporal mode resolved into something a predicate (or an index query) can apply: an inclusive
 * time range, or a set of session ids (recent_sessions needs to know which sessions are recent,
 * which only the store can tell — see `recentSessionIds`).
 */
export type TemporalConstraint =
  | { kind: 'range'; fromMs: number; toMs: number }
  | { kind: 'sessions'; sessionIds: readonly string[] };

/** A session's latest activity, as the store reports it. */
export interface SessionActivity {
  sessionId: string;
  lastActivityAt: number;
}

/** Throws InvalidRecallRequestError naming the bad field; returns the mode unchanged. */
export function validateTemporalMode(mode: TemporalMode): TemporalMode {
  switch (mode.mode) {
    case 'recent_sessions':
      if (!Number.isInteger(mode.n) || mode.n < 1) {
        throw new InvalidRecallRequestError(
          'recentSessions.n',
          `must be a positive integer, got ${mode.n}`,
        );
      }
      return mode;
    case 'time_window':
      epochMillis('timeWindow.fromMs', mode.fromMs);
      epochMillis('timeWindow.toMs', mode.toMs);
      if (mode.fromMs > mode.toMs) {
        throw new InvalidRecallRequestError(
          'timeWindow',
          `fromMs ${mode.fromMs} is after toMs ${mode.toMs}`,
        );
      }
      return mode;
    case 'around_event':
      epochMillis('aroundEvent.timeMs', mode.timeMs);
      if (!Number.isFinite(mode.windowMs) || mode.windowMs < 0) {
        throw new InvalidRecallRequestError(
          'aroundEvent.windowMs',
          `must be >= 0, got ${mode.windowMs}`,
        );
      }
      return mode;
  }
}

/**
 * Resolves a validated mode. `time_window` is [from, to]; `around_event` is [time − window,
 * time + window]; `recent_sessions(n)` is the n most recently active of `sessions` (required for
 * that mode: without them it cannot be answered).
 */
export function resolveTemporalMode(
  mode: TemporalMode,
  sessions?: readonly SessionActivity[],
): TemporalConstraint {
  validateTemporalMode(mode);
  switch (mode.mode) {
    case 'time_window':
      return { kind: 'range', fromMs: mode.fromMs, toMs: mode.toMs };
    case 'around_event':
      return {
        kind: 'range',
        fromMs: mode.timeMs - mode.windowMs,
        toMs: mode.timeMs + mode.windowMs,
      };
    case 'recent_sessions':
      if (sessions === undefined) {
        throw new RangeError('recent_sessions needs the project sessions to resolve');
      }
      return { kind: 'sessions', sessionIds: recentSessionIds(sessions, mode.n) };
  }
}

/** The n most recently active distinct sessions, newest first (ties by id). */
export function recentSessionIds(sessions: readonly SessionActivity[], n: number): string[] {
  const latest = new Map<string, number>();
  for (const { sessionId, lastActivityAt } of sessions) {
    latest.set(sessionId, Math.max(lastActivityAt, latest.get(sessionId) ?? -Infinity));
  }
  return [...latest.entries()]
    .sort((a, b) => b[1] - a[1] || compareText(a[0], b[0]))
    .slice(0, Math.max(0, n))
    .map(([sessionId]) => sessionId);
}

/** A point in time (a memory's createdAt, a turn's timestamp) against a range, inclusive. */
export function inRange(constraint: { fromMs: number; toMs: number }, time: number): boolean {
  return time >= constraint.fromMs && time <= constraint.toMs;
}

/** An interval (an episode's start..end) overlapping a range, inclusive at both ends. */
export function overlapsRange(
  constraint: { fromMs: number; toMs: number },
  start: number,
  end: number,
): boolean {
  return start <= constraint.toMs && end >= constraint.fromMs;
}

/** True when any of `sessionIds` is in the constraint's session set. */
export function inSessions(
  constraint: { sessionIds: readonly string[] },
  sessionIds: readonly string[],
): boolean {
  return sessionIds.some((id) => constraint.sessionIds.includes(id));
}

function epochMillis(field: string, value: number): void {
  if (!Number.isFinite(value)) {
    throw new InvalidRecallRequestError(field, `${value} is not an epoch millisecond`);
  }
}
