import type { EpochMillis } from '@engram/contracts';
import { MS_PER_DAY } from '../time';
import type { Distillation } from '../types';

/** Distillations older than this are condensed to narratives and 🔴 facts (seed 001 Phase 2). */
export const GRADIENT_AGE_DAYS = 3;

export interface GradedDistillation {
  distillation: Distillation;
  /** True when it was older than the gradient age and was condensed. */
  condensed: boolean;
}

/**
 * The temporal gradient (Nuum's recursive distillation): recent distillations stay as they are;
 * those whose last entry is more than `ageDays` before `now` keep only their narratives and 🔴
 * facts, and lose their current task (stale work state is harmful). Order is kept.
 */
export function applyTemporalGradient(
  distillations: readonly Distillation[],
  now: EpochMillis,
  ageDays = GRADIENT_AGE_DAYS,
): GradedDistillation[] {
  return distillations.map((distillation) => {
    const at = distillation.lastEntryAt ?? distillation.triggerAt;
    if (now - at <= ageDays * MS_PER_DAY) return { distillation, condensed: false };
    return { distillation: condense(distillation), condensed: true };
  });
}

/** A distillation reduced to narratives and 🔴 facts. */
export function condense(distillation: Distillation): Distillation {
  return {
    ...distillation,
    segments: distillation.segments
      .map((segment) => ({ ...segment, facts: segment.facts.filter((f) => f.priority === '🔴') }))
      .filter((segment) => segment.narrative !== null || segment.facts.length > 0),
    currentTask: null,
    suggestedResponse: null,
  };
}
