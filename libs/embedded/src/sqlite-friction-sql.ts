import {
  normaliseErrorMessage,
  userCorrectionOf,
  type FrictionScope,
  type FrictionWindow,
} from '@engram/core';
import type { Database } from 'better-sqlite3';
import { registerHabitFunctions } from './sqlite-friction-habit-functions';

// The SQL pieces and functions the friction source's queries share (sqlite-friction-source.ts,
// sqlite-friction-habits.ts).

/**
 * The measures of a group of failed calls (FailureGroupMeasures, but `sessions` and
 * `occurrences`), over rows with `duration`, `tokens`, `first_at`, `last_at`, `session`,
 * `first_event` and `agent`: the failed calls themselves, or the retry loops of a session.
 */
export const GROUP_MEASURES = `SUM(duration) AS durationMs, SUM(tokens) AS tokens,
    MIN(first_at) AS firstAt, MAX(last_at) AS lastAt,
    engram_sample(session, :max) AS sessionIds, engram_sample(first_event, :max) AS eventIds,
    engram_sample(agent, 100) AS agentIds`;

export type SampleField = 'sessionIds' | 'eventIds' | 'agentIds';
export type SampleColumns = Record<SampleField, string>;

/** A group row with its samples (JSON arrays from engram_sample) parsed. */
export function withSamples<R extends SampleColumns>(
  row: R,
): Omit<R, SampleField> & Record<SampleField, string[]> {
  return {
    ...row,
    sessionIds: JSON.parse(row.sessionIds) as string[],
    eventIds: JSON.parse(row.eventIds) as string[],
    agentIds: JSON.parse(row.agentIds) as string[],
  };
}

/** Columns `at`, `tenant`, `project` against `:from`, `:to`, `:tenant`, `:project`. */
export const WINDOW_AND_SCOPE = `at >= :from AND at < :to
  AND (:tenant IS NULL OR tenant = :tenant) AND (:project IS NULL OR project = :project)`;

/** The window and scope as the named parameters of WINDOW_AND_SCOPE. */
export function windowAndScope(
  window: FrictionWindow,
  scope: FrictionScope,
): { from: number; to: number; tenant: string | null; project: string | null } {
  return {
    from: window.from,
    to: window.to,
    tenant: scope.kind === 'all' ? null : scope.tenantId,
    project: scope.kind === 'project' ? scope.projectId : null,
  };
}

/**
 * SQL functions over the core: `engram_normalise_error(message)`, `engram_correction(text)`
 * (JSON `{kind, statement}` or NULL; the last answer is remembered, as SQLite may ask twice for
 * one row) and the aggregate `engram_sample(value, max)` (a JSON array of the `max` smallest
 * distinct values: a bounded, deterministic evidence sample per group); then the habit
 * detectors' (registerHabitFunctions).
 */
export function registerFunctions(db: Database): void {
  db.function('engram_normalise_error', { deterministic: true }, (message: unknown) =>
    typeof message === 'string' ? normaliseErrorMessage(message) : '',
  );
  let lastText: unknown = null;
  let lastAnswer: string | null = null;
  db.function('engram_correction', { deterministic: true }, (text: unknown) => {
    if (text === lastText) return lastAnswer;
    lastText = text;
    const correction = typeof text === 'string' ? userCorrectionOf(text) : null;
    lastAnswer = correction === null ? null : JSON.stringify(correction);
    return lastAnswer;
  });
  const step = (kept: string[], value: unknown, max: unknown): string[] => {
    if (typeof value !== 'string') return kept;
    const limit = typeof max === 'number' ? max : Number(max);
    if (kept.includes(value)) return kept;
    if (kept.length >= limit && value >= kept[kept.length - 1]) return kept;
    let at = kept.length;
    while (at > 0 && kept[at - 1] > value) at -= 1;
    kept.splice(at, 0, value);
    if (kept.length > limit) kept.pop();
    return kept;
  };
  db.aggregate<string[]>('engram_sample', {
    start: () => [],
    // The typings know only one-argument aggregates; SQLite passes (value, max).
    step: step as (kept: string[], value: string) => string[],
    result: (kept: string[]) => JSON.stringify(kept),
  });
  registerHabitFunctions(db);
}
