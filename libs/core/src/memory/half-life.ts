import type { Memory, MemoryType } from '@engram/contracts';
import { DISTILLED_HALF_LIFE_DAYS } from '../distillation/memory-types';

/**
 * The default half-life in days of each memory type (SPEC §6, seed 002 §13): work_state 7 d,
 * dead_end 90 d, the distilled types as the distiller writes them (error_pattern 30 d, gotcha and
 * pattern 90 d), and null — no half-life of its own — for the global kinds (decision,
 * preference, requirement) and every type the seed gives none. A memory's own
 * `decayHalfLifeDays` overrides its type's.
 */
export const MEMORY_TYPE_HALF_LIFE_DAYS: Readonly<Record<MemoryType, number | null>> =
  Object.freeze({
    ...DISTILLED_HALF_LIFE_DAYS,
    dead_end: 90,
    requirement: null,
    module_insight: null,
    prefetch_pattern: null,
    causal_dependency: null,
    task_calibration: null,
    e2e_observation: null,
    work_unit_outcome: null,
    workflow_recipe: null,
    context_cost: null,
  });

/**
 * The half-life a memory ages by: its own `decayHalfLifeDays` when that is a positive finite
 * number, else its type's default; null when neither gives one.
 */
export function effectiveHalfLifeDays(
  memory: Pick<Memory, 'memoryType' | 'decayHalfLifeDays'>,
): number | null {
  const own = memory.decayHalfLifeDays;
  if (own !== null && Number.isFinite(own) && own > 0) return own;
  return MEMORY_TYPE_HALF_LIFE_DAYS[memory.memoryType] ?? null;
}
