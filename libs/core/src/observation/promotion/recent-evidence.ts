import { foldSignal, recordSessionSummary, type ProjectObservationStats } from '../project-stats';
import type { SessionSummary } from '../session-summary';
import type { ObserverSignal } from '../signals';

/**
 * Why a promotion reads the evidence up to its own time (issue #19). A project's promotions are
 * re-evaluated while they are among its latest requests, then frozen: what a frozen request gave
 * is never evaluated again. Evaluated on "every signal folded so far", the frozen version was the
 * one of whatever other sessions' signals had arrived when 64 newer requests had — a matter of
 * batching, partitions and restarts, not of the events: a SIGKILLed run froze other counts,
 * weights and novelty than an uninterrupted one. A request now reads the project's statistics as
 * of its event time: the base (every signal up to the horizon, the time of the newest frozen
 * request) plus the recent evidence (kept raw) up to its `at`. That is the same whatever the
 * arrival order, so a frozen version is final and equal in every run. (Evidence older than the
 * horizon that arrives after it — a partition more than the retained requests behind — can only
 * be folded into the base: the frozen requests do not see it.)
 */
export interface RecentEvidence {
  /** Signals newer than the horizon. */
  signals: ObserverSignal[];
  /** Summaries of sessions that ended after the horizon. */
  summaries: SessionSummary[];
}

export function emptyRecentEvidence(): RecentEvidence {
  return { signals: [], summaries: [] };
}

/** Folds one signal: into the base when it is not newer than the horizon, else kept raw. */
export function addRecentSignal(
  stats: ProjectObservationStats,
  recent: RecentEvidence,
  horizon: number,
  signal: ObserverSignal,
): void {
  if (signal.at <= horizon) foldSignal(stats, signal);
  else recent.signals.push(signal);
}

/** Records one summary: into the base when it ended by the horizon, else kept raw (latest wins). */
export function addRecentSummary(
  stats: ProjectObservationStats,
  recent: RecentEvidence,
  horizon: number,
  summary: SessionSummary,
  maxSessions: number,
): void {
  if (summary.endedAt <= horizon) {
    recordSessionSummary(stats, summary, maxSessions);
    return;
  }
  recent.summaries = recent.summaries.filter((s) => s.sessionId !== summary.sessionId);
  recent.summaries.push(summary);
}

/** Moves the recent evidence up to `horizon` (inclusive) into the base statistics. */
export function foldRecentUpTo(
  stats: ProjectObservationStats,
  recent: RecentEvidence,
  horizon: number,
  maxSessions: number,
): void {
  const signals = recent.signals.filter((s) => s.at <= horizon);
  const summaries = recent.summaries.filter((s) => s.endedAt <= horizon);
  for (const signal of signals) foldSignal(stats, signal);
  for (const summary of summaries) recordSessionSummary(stats, summary, maxSessions);
  recent.signals = recent.signals.filter((s) => s.at > horizon);
  recent.summaries = recent.summaries.filter((s) => s.endedAt > horizon);
}

/**
 * The statistics as of successive times: `at(t)` for non-decreasing `t` folds the recent
 * evidence up to `t` into one copy of the base (so a whole evaluation copies the base once).
 */
export function statsTimeline(
  base: ProjectObservationStats,
  recent: RecentEvidence | undefined,
  maxSessions: number,
): { at(time: number): ProjectObservationStats } {
  if (!recent || (recent.signals.length === 0 && recent.summaries.length === 0)) {
    return { at: () => base };
  }
  const stats = structuredClone(base);
  const signals = [...recent.signals].sort((a, b) => a.at - b.at);
  const summaries = [...recent.summaries].sort((a, b) => a.endedAt - b.endedAt);
  let nextSignal = 0;
  let nextSummary = 0;
  return {
    at(time) {
      while (nextSignal < signals.length && signals[nextSignal].at <= time) {
        foldSignal(stats, signals[nextSignal++]);
      }
      while (nextSummary < summaries.length && summaries[nextSummary].endedAt <= time) {
        recordSessionSummary(stats, summaries[nextSummary++], maxSessions);
      }
      return stats;
    },
  };
}
