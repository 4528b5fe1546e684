import {
  applyCoAccess,
  applyFileAccess,
  emptyCoAccessAggregate,
  type CoAccessAggregate,
} from './co-access-graph';
import type { SessionSummary } from './session-summary';
import { e2eObservationKey } from './e2e-observation-key';
import type {
  BacktrackCause,
  E2eObservationSignal,
  ErrorRetrySignal,
  ObserverSignal,
} from './signals';

/**
 * The durable signal statistics of one project: a fold over every signal observed, validated or
 * not (SPEC §5: statistics are aggregated continuously; only memories wait for validation), plus
 * the summaries of recent sessions. The frequency stage and the cross-session rules read it.
 */
export interface ProjectObservationStats {
  coAccess: CoAccessAggregate;
  /** Keyed by error key (tool + normalised message). */
  errors: Record<string, ErrorStat>;
  /** Keyed by file. */
  backtracks: Record<string, BacktrackStat>;
  /** Oldest first, at most `maxSessionSummaries`. */
  sessions: SessionSummary[];
  /**
   * The sessions that saw each e2e observation (by its e2eObservationKey), a few per key, for the
   * key's latest observations: a second session confirms one (seed 002 §15 Q6). Optional: states
   * kept before it have none.
   */
  e2eSessions?: Record<string, string[]>;
}

export interface ErrorStat {
  toolName: string;
  normalisedError: string;
  occurrences: number;
  sessionCount: number;
  lastSeenAt: number;
  /** How it was resolved, by description, with counts (at most 10 descriptions). */
  resolutions: Record<string, number>;
}

export interface BacktrackStat {
  occurrences: number;
  sessionCount: number;
  lastSeenAt: number;
  causes: Partial<Record<BacktrackCause, number>>;
}

const MAX_RESOLUTIONS = 10;
/** Enough to tell a confirmed observation (two sessions) with room; bounded, it is one record. */
const MAX_E2E_SESSIONS = 5;
const MAX_E2E_KEYS = 2_000;

export function emptyProjectStats(): ProjectObservationStats {
  return { coAccess: emptyCoAccessAggregate(), errors: {}, backtracks: {}, sessions: [] };
}

/** Adds one signal to the statistics (in place). Apply each signal once. */
export function foldSignal(stats: ProjectObservationStats, signal: ObserverSignal): void {
  switch (signal.type) {
    case 'file_access':
      applyFileAccess(stats.coAccess, signal);
      return;
    case 'co_access':
      applyCoAccess(stats.coAccess, signal);
      return;
    case 'error_retry':
      foldError(stats, signal);
      return;
    case 'backtrack': {
      const stat = (stats.backtracks[signal.filePath] ??= {
        occurrences: 0,
        sessionCount: 0,
        lastSeenAt: 0,
        causes: {},
      });
      stat.occurrences += 1;
      if (signal.firstInSession) stat.sessionCount += 1;
      stat.lastSeenAt = Math.max(stat.lastSeenAt, signal.at);
      stat.causes[signal.likelyCause] = (stat.causes[signal.likelyCause] ?? 0) + 1;
      return;
    }
    case 'e2e_observation':
      foldE2eObservation(stats, signal);
      return;
    case 'sequence':
    case 'time_anomaly':
    case 'dead_end':
      // Counted from session summaries and scratchpads; nothing durable to aggregate.
      return;
  }
}

/** Adds (or replaces) a session's summary, keeping the newest `maxSessions` by end time. */
export function recordSessionSummary(
  stats: ProjectObservationStats,
  summary: SessionSummary,
  maxSessions: number,
): void {
  const others = stats.sessions.filter((s) => s.sessionId !== summary.sessionId);
  others.push(summary);
  others.sort((a, b) => a.endedAt - b.endedAt || (a.sessionId < b.sessionId ? -1 : 1));
  stats.sessions = others.slice(Math.max(0, others.length - maxSessions));
}

function foldError(stats: ProjectObservationStats, signal: ErrorRetrySignal): void {
  const stat = (stats.errors[signal.errorKey] ??= {
    toolName: signal.toolName,
    normalisedError: signal.normalisedError,
    occurrences: 0,
    sessionCount: 0,
    lastSeenAt: 0,
    resolutions: {},
  });
  stat.occurrences += signal.occurrences;
  if (signal.firstInSession) stat.sessionCount += 1;
  stat.lastSeenAt = Math.max(stat.lastSeenAt, signal.at);
  const how = signal.resolvedHow;
  if (
    how !== null &&
    (how in stat.resolutions || Object.keys(stat.resolutions).length < MAX_RESOLUTIONS)
  ) {
    stat.resolutions[how] = (stat.resolutions[how] ?? 0) + 1;
  }
}

/** Records the session under the observation's key (newest keys kept, the oldest dropped). */
function foldE2eObservation(stats: ProjectObservationStats, signal: E2eObservationSignal): void {
  const seen = (stats.e2eSessions ??= {});
  const key = e2eObservationKey(signal);
  const sessions = seen[key] ?? [];
  delete seen[key];
  seen[key] = sessions.includes(signal.sessionId)
    ? sessions
    : [...sessions, signal.sessionId].slice(-MAX_E2E_SESSIONS);
  const keys = Object.keys(seen);
  for (const old of keys.slice(0, Math.max(0, keys.length - MAX_E2E_KEYS))) delete seen[old];
}
