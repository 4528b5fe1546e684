import type { EpochMillis } from '@engram/contracts';
import { formatDistillation } from '../format';
import { isoDay } from '../time';
import { estimateTokens } from '../tokens';
import type { Distillation } from '../types';

/** SPEC §8 / seed 001: a day's distillations past this many tokens trigger a reflection. */
export const REFLECTION_TOKEN_THRESHOLD = 40_000;

/** The daily reflection runs from this UTC hour (seed 001: a 6 AM cron). */
export const DEFAULT_REFLECTION_HOUR_UTC = 6;

export interface ReflectionGuardInput {
  now: EpochMillis;
  /** Tokens of the project's distillations of the UTC day of `now`. */
  dayTokens: number;
  /** When the project was last reflected, or null. */
  lastReflectedAt: EpochMillis | null;
  scheduledHourUtc?: number;
}

export type ReflectionDecision =
  | { due: true; day: string; reason: 'token-threshold' | 'daily-schedule' }
  | { due: false; day: string; reason: 'already-reflected-today' | 'not-yet' };

/**
 * Whether a project's reflection runs now: at most once per UTC day (the seed's
 * `memory:reflect:triggered:{date}` guard), as soon as the day's distillations pass
 * REFLECTION_TOKEN_THRESHOLD tokens, and otherwise on the daily schedule.
 */
export function reflectionDecision(input: ReflectionGuardInput): ReflectionDecision {
  const day = isoDay(input.now);
  if (input.lastReflectedAt !== null && isoDay(input.lastReflectedAt) === day) {
    return { due: false, day, reason: 'already-reflected-today' };
  }
  if (input.dayTokens > REFLECTION_TOKEN_THRESHOLD) {
    return { due: true, day, reason: 'token-threshold' };
  }
  const hour = new Date(input.now).getUTCHours();
  if (hour >= (input.scheduledHourUtc ?? DEFAULT_REFLECTION_HOUR_UTC)) {
    return { due: true, day, reason: 'daily-schedule' };
  }
  return { due: false, day, reason: 'not-yet' };
}

/** The key of the once-a-day guard (set-if-absent in whatever store the service uses). */
export function reflectionGuardKey(tenantId: string, projectId: string, day: string): string {
  return `reflect:triggered:${JSON.stringify([tenantId, projectId, day])}`;
}

/** Tokens of one distillation in the segment format the reflector reads. */
export function distillationTokens(distillation: Distillation): number {
  return estimateTokens(formatDistillation(distillation));
}

/** Tokens of the distillations whose window started on `day` (`YYYY-MM-DD`). */
export function dayTokens(distillations: readonly Distillation[], day: string): number {
  return distillations
    .filter((distillation) => distillation.date === day)
    .reduce((sum, distillation) => sum + distillationTokens(distillation), 0);
}
