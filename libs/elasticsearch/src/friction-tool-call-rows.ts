import type { AggregationsAggregationContainer } from '@elastic/elasticsearch/lib/api/types';
import type { FrictionDayCount, FrictionSettings, RetryLoopRow } from '@engram/core';
import type { CompositeBucket } from './friction-composite';

// The friction rows of the tool calls (distributed mode), folded from composite buckets exactly as
// the embedded SQL groups the failed calls (libs/embedded sqlite-friction-source.ts): the buckets
// are already grouped by Elasticsearch down to one turn (or one session) and one day, so what is
// folded here is one row per group, never one per call.

/** What each bucket measures of its failed calls (`sample` smallest event and agent ids). */
export function measureAggregations(
  sample: number,
  agentSample = sample,
): Record<string, AggregationsAggregationContainer> {
  return {
    durationMs: { sum: { field: 'durationMs' } },
    tokens: { sum: { field: 'tokensUsed' } },
    firstAt: { min: { field: 'timestamp' } },
    lastAt: { max: { field: 'timestamp' } },
    eventIds: { terms: { field: 'eventId', size: sample, order: { _key: 'asc' } } },
    agentIds: { terms: { field: 'agentId', size: agentSample, order: { _key: 'asc' } } },
  };
}

/** A group of failed calls' measures (a bucket, or buckets folded). */
export interface Measured {
  count: number;
  durationMs: number;
  tokens: number;
  firstAt: number;
  lastAt: number;
  /** The smallest event and agent ids, ascending. */
  eventIds: string[];
  agentIds: string[];
}

interface Value {
  value: number | null;
}
interface Terms {
  buckets: { key: string }[];
}

export function measuredOf(bucket: CompositeBucket<unknown>): Measured {
  const value = (name: string) => (bucket[name] as Value | undefined)?.value ?? 0;
  const keys = (name: string) =>
    ((bucket[name] as Terms | undefined)?.buckets ?? []).map((b) => b.key);
  return {
    count: bucket.doc_count,
    durationMs: value('durationMs'),
    tokens: value('tokens'),
    firstAt: value('firstAt'),
    lastAt: value('lastAt'),
    eventIds: keys('eventIds'),
    agentIds: keys('agentIds'),
  };
}

/** The `max` smallest distinct values of `values` (the embedded `engram_sample`). */
export function smallest(values: Iterable<string>, max: number): string[] {
  return [...new Set(values)].sort(byCode).slice(0, max);
}

/** SQLite's BINARY collation: code unit order, not the locale's. */
export function byCode(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Two measures folded (sums, earliest and latest, the `sample` smallest ids). */
export function fold(a: Measured, b: Measured, sample: number): Measured {
  return {
    count: a.count + b.count,
    durationMs: a.durationMs + b.durationMs,
    tokens: a.tokens + b.tokens,
    firstAt: Math.min(a.firstAt, b.firstAt),
    lastAt: Math.max(a.lastAt, b.lastAt),
    eventIds: smallest([...a.eventIds, ...b.eventIds], sample),
    agentIds: smallest([...a.agentIds, ...b.agentIds], sample),
  };
}

/** Folds `items` by `keyOf`, in first-seen order. */
export function foldBy<T>(
  items: Iterable<T>,
  keyOf: (item: T) => string,
  merge: (a: T, b: T) => T,
): Map<string, T> {
  const folded = new Map<string, T>();
  for (const item of items) {
    const key = keyOf(item);
    const seen = folded.get(key);
    folded.set(key, seen === undefined ? item : merge(seen, item));
  }
  return folded;
}

/** A failed call bucket: one command of one turn on one day (composite key). */
export interface TurnDayKey {
  tenantId: string;
  projectId: string;
  toolName: string;
  command: string;
  sessionId: string;
  promptId: number;
  day: string;
}

export interface TurnDay {
  key: TurnDayKey;
  measured: Measured;
}

const habitOf = (k: TurnDayKey) => JSON.stringify([k.tenantId, k.projectId, k.toolName, k.command]);
const sessionOf = (k: TurnDayKey) => JSON.stringify([habitOf(k), k.sessionId]);
const turnOf = (k: TurnDayKey) => JSON.stringify([sessionOf(k), k.promptId]);

/**
 * Retry loops (RETRY_TURNS, RETRY_LOOPS and retryLoops of the embedded source): the turns where
 * a command failed at least `minRetries` times, summed per session (its first event and agent the
 * smallest), grouped per habit with at least `minSessionsPerFinding` sessions. Also returns the
 * qualifying turns, whose failed calls the timeline counts as tool misuse.
 */
export function retryLoopsOf(
  buckets: readonly TurnDay[],
  settings: Pick<FrictionSettings, 'minRetries' | 'minSessionsPerFinding' | 'maxEvidence'>,
): { rows: RetryLoopRow[]; turns: Set<string> } {
  const one = (m: Measured): Measured => ({
    ...m,
    eventIds: m.eventIds.slice(0, 1),
    agentIds: m.agentIds.slice(0, 1),
  });
  const turns = foldBy(
    buckets.map((b) => ({ key: b.key, measured: one(b.measured) })),
    (b) => turnOf(b.key),
    (a, b) => ({ key: a.key, measured: fold(a.measured, b.measured, 1) }),
  );
  const loops = [...turns.entries()].filter(([, t]) => t.measured.count >= settings.minRetries);
  const sessions = foldBy(
    loops.map(([, t]) => t),
    (t) => sessionOf(t.key),
    (a, b) => ({ key: a.key, measured: fold(a.measured, b.measured, 1) }),
  );
  const habits = new Map<string, { key: TurnDayKey; sessions: Measured[]; ids: string[] }>();
  for (const session of sessions.values()) {
    const habit = habits.get(habitOf(session.key)) ?? { key: session.key, sessions: [], ids: [] };
    habit.sessions.push(session.measured);
    habit.ids.push(session.key.sessionId);
    habits.set(habitOf(session.key), habit);
  }
  const rows: RetryLoopRow[] = [];
  const kept = new Set<string>();
  for (const [id, { key, sessions: measured, ids }] of habits) {
    if (measured.length < settings.minSessionsPerFinding) continue;
    kept.add(id);
    const all = measured.reduce((a, b) => fold(a, b, Number.MAX_SAFE_INTEGER));
    rows.push({
      tenantId: key.tenantId,
      projectId: key.projectId,
      toolName: key.toolName,
      command: key.command,
      sessions: measured.length,
      occurrences: all.count,
      durationMs: all.durationMs,
      tokens: all.tokens,
      firstAt: all.firstAt,
      lastAt: all.lastAt,
      sessionIds: smallest(ids, settings.maxEvidence),
      eventIds: all.eventIds.slice(0, settings.maxEvidence),
      agentIds: all.agentIds.slice(0, 100),
    });
  }
  rows.sort(
    (a, b) =>
      byCode(a.tenantId, b.tenantId) ||
      byCode(a.projectId, b.projectId) ||
      byCode(a.toolName, b.toolName) ||
      byCode(a.command, b.command),
  );
  const loopTurns = new Set(
    loops.filter(([, t]) => kept.has(habitOf(t.key))).map(([turn]) => turn),
  );
  return { rows, turns: loopTurns };
}

/** The failed calls of the retry-loop turns per day (the timeline's tool misuse). */
export function retryLoopDays(buckets: readonly TurnDay[], turns: Set<string>): FrictionDayCount[] {
  const days = new Map<string, number>();
  for (const { key, measured } of buckets) {
    if (turns.has(turnOf(key))) days.set(key.day, (days.get(key.day) ?? 0) + measured.count);
  }
  return dayCounts(days, 'tool-misuse');
}

/** A failed call bucket: one error pattern of one session on one day (composite key). */
export interface PatternDay {
  key: { tenantId: string; toolName: string; errorPattern: string; sessionId: string; day: string };
  count: number;
}

/**
 * The failed calls per day whose tenant-wide pattern (tool + normalised error) failed in at
 * least `minSessionsPerFinding` sessions (the timeline's recurring failures).
 */
export function recurringFailureDays(
  buckets: readonly PatternDay[],
  minSessions: number,
): FrictionDayCount[] {
  const patternOf = (k: PatternDay['key']) =>
    JSON.stringify([k.tenantId, k.toolName, k.errorPattern]);
  const sessions = new Map<string, Set<string>>();
  for (const { key } of buckets) {
    const seen = sessions.get(patternOf(key)) ?? new Set<string>();
    seen.add(key.sessionId);
    sessions.set(patternOf(key), seen);
  }
  const days = new Map<string, number>();
  for (const { key, count } of buckets) {
    if ((sessions.get(patternOf(key))?.size ?? 0) < minSessions) continue;
    days.set(key.day, (days.get(key.day) ?? 0) + count);
  }
  return dayCounts(days, 'recurring-failure');
}

function dayCounts(days: Map<string, number>, kind: FrictionDayCount['kind']): FrictionDayCount[] {
  return [...days].sort(([a], [b]) => byCode(a, b)).map(([day, count]) => ({ day, count, kind }));
}
