import type { EpochMillis } from '@engram/contracts';
import type { FrictionSettings } from './friction-settings';
import type {
  FrictionCost,
  FrictionDayCount,
  FrictionEvidence,
  FrictionKind,
} from './friction-types';

/**
 * What the adapters measure of a group of failed calls (an error pattern of a project, a retry
 * habit): exact counts and sums, bounded sorted samples.
 */
export interface FailureGroupMeasures {
  sessions: number;
  occurrences: number;
  durationMs: number;
  tokens: number;
  firstAt: EpochMillis;
  lastAt: EpochMillis;
  sessionIds: string[];
  eventIds: string[];
  agentIds: string[];
}

/** What the cost model needs of a group of events. */
export interface MeasuredFriction {
  occurrences: number;
  durationMs: number;
  tokens: number;
}

/** The cost of a friction (FrictionCost): measured tool time and tokens plus a per-occurrence estimate. */
export function frictionCost(
  measured: MeasuredFriction,
  settings: Pick<FrictionSettings, 'minutesPerOccurrence' | 'tokensPerMinute'>,
): FrictionCost {
  const measuredMinutes = measured.durationMs / 60_000;
  return {
    occurrences: measured.occurrences,
    measuredMinutes: round2(measuredMinutes),
    tokens: measured.tokens,
    estimatedMinutes: round2(
      measuredMinutes +
        measured.occurrences * settings.minutesPerOccurrence +
        measured.tokens / settings.tokensPerMinute,
    ),
  };
}

/** What a cluster of measured rows adds up to: counts summed, span joined, samples merged. */
export interface ClusterMeasures {
  occurrences: number;
  firstAt: EpochMillis;
  lastAt: EpochMillis;
  cost: FrictionCost;
  evidence: FrictionEvidence;
  agentIds: string[];
}

/** The measures of rows that are one finding (one error pattern's projects, one drift's repairs). */
export function clusterMeasures(
  rows: readonly FailureGroupMeasures[],
  settings: Pick<FrictionSettings, 'minutesPerOccurrence' | 'tokensPerMinute' | 'maxEvidence'>,
): ClusterMeasures {
  const sum = (of: (row: FailureGroupMeasures) => number) =>
    rows.reduce((total, row) => total + of(row), 0);
  const occurrences = sum((row) => row.occurrences);
  return {
    occurrences,
    firstAt: Math.min(...rows.map((row) => row.firstAt)),
    lastAt: Math.max(...rows.map((row) => row.lastAt)),
    cost: frictionCost(
      { occurrences, durationMs: sum((row) => row.durationMs), tokens: sum((row) => row.tokens) },
      settings,
    ),
    evidence: {
      sessionIds: mergeSamples(
        rows.map((row) => row.sessionIds),
        settings.maxEvidence,
      ),
      eventIds: mergeSamples(
        rows.map((row) => row.eventIds),
        settings.maxEvidence,
      ),
      memoryIds: [],
    },
    agentIds: mergeSamples(
      rows.map((row) => row.agentIds),
      Infinity,
    ),
  };
}

/**
 * Confidence that a finding is real friction: `base` when it just reaches the threshold, rising
 * by 0.05 per session beyond it, at most 0.95.
 */
export function frictionConfidence(sessions: number, threshold: number, base: number): number {
  return round2(Math.min(0.95, base + 0.05 * Math.max(0, sessions - threshold)));
}

/** The per-day counts of rows (`days`) summed into timeline entries of one kind. */
export function dayCounts(
  rows: readonly { days?: Record<string, number> }[],
  kind: FrictionKind,
): FrictionDayCount[] {
  const total = new Map<string, number>();
  for (const row of rows) {
    for (const [day, count] of Object.entries(row.days ?? {})) {
      total.set(day, (total.get(day) ?? 0) + count);
    }
  }
  return [...total]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([day, count]) => ({ day, kind, count }));
}

/** Sorted distinct values, at most `max` (a deterministic evidence sample). */
export function sample(values: Iterable<string>, max: number): string[] {
  return [...new Set(values)].sort().slice(0, max);
}

/** Merges sorted samples into one of at most `max`. */
export function mergeSamples(samples: Iterable<readonly string[]>, max: number): string[] {
  const all: string[] = [];
  for (const values of samples) all.push(...values);
  return sample(all, max);
}

export function round2(value: number): number {
  return Math.round(value * 100) / 100;
}

export function isoDate(at: EpochMillis): string {
  return new Date(at).toISOString().slice(0, 10);
}

/** Text on one line, cut at `max` characters with an ellipsis. */
export function oneLineCut(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length <= max ? line : `${line.slice(0, max - 1)}…`;
}

/** Backticks inside inline code would end it early: replace them. */
export function inlineCode(text: string): string {
  return `\`${text.replace(/`/g, "'")}\``;
}
