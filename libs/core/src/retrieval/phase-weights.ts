import type { MemoryType } from '@engram/contracts';
import type { UniversalPhase } from './universal-phase';

/** Multipliers per phase and memory type; a type absent from a row weighs 1.0. */
export type PhaseWeightTable = Readonly<
  Record<UniversalPhase, Readonly<Partial<Record<MemoryType, number>>>>
>;

/**
 * PHASE_WEIGHTS of seed 002 §7, verbatim. Missing entries are deliberate (e.g. `preference`
 * outside define/implement/explore): they mean "neutral", 1.0, not 0 — see `phaseWeight`.
 */
export const PHASE_WEIGHTS: PhaseWeightTable = deepFreeze({
  define: {
    requirement: 1.5,
    decision: 1.3,
    workflow_recipe: 1.5,
    task_calibration: 1.4,
    pattern: 1.2,
    work_state: 1.1,
    preference: 1.0,
    module_insight: 1.0,
    gotcha: 0.8,
    error_pattern: 0.7,
    causal_dependency: 0.9,
    dead_end: 1.2, // avoid dead ends early in planning
    e2e_observation: 0.6,
    prefetch_pattern: 0.5,
    work_unit_outcome: 1.0,
    context_cost: 1.3, // know how expensive a module is before planning
  },
  implement: {
    gotcha: 1.5,
    error_pattern: 1.3,
    causal_dependency: 1.3,
    pattern: 1.2,
    module_insight: 1.2,
    prefetch_pattern: 1.1,
    work_state: 1.0,
    dead_end: 1.3, // don't repeat failed approaches while coding
    workflow_recipe: 1.4, // recipes are most valuable during implementation
    work_unit_outcome: 0.9,
    e2e_observation: 0.7,
    requirement: 0.8,
    decision: 0.7,
    task_calibration: 0.5,
    preference: 0.9,
    context_cost: 0.4,
  },
  validate: {
    error_pattern: 1.5,
    requirement: 1.4,
    e2e_observation: 1.5,
    gotcha: 1.2,
    decision: 1.1,
    module_insight: 0.9,
    dead_end: 0.8,
    work_state: 0.5,
    prefetch_pattern: 0.3,
    causal_dependency: 1.0,
    task_calibration: 0.8,
    workflow_recipe: 0.6,
    work_unit_outcome: 1.1, // past outcomes inform what to check
    context_cost: 0.3,
  },
  refine: {
    pattern: 1.4,
    error_pattern: 1.3,
    gotcha: 1.2,
    dead_end: 1.4,
    decision: 1.0,
    module_insight: 1.1,
    work_state: 0.9,
    requirement: 0.7,
    e2e_observation: 0.8,
    workflow_recipe: 1.0,
    causal_dependency: 1.1,
    work_unit_outcome: 0.8,
    context_cost: 0.4,
  },
  explore: {
    decision: 1.4,
    module_insight: 1.3,
    pattern: 1.2,
    workflow_recipe: 1.1,
    requirement: 1.0,
    preference: 1.0,
    dead_end: 0.9,
    work_unit_outcome: 1.0,
    gotcha: 0.8,
    error_pattern: 0.7,
    e2e_observation: 0.9,
    causal_dependency: 1.1,
    task_calibration: 0.6,
    context_cost: 0.5,
  },
  reflect: {
    work_unit_outcome: 1.5,
    task_calibration: 1.4,
    dead_end: 1.3,
    error_pattern: 1.2,
    decision: 1.2,
    module_insight: 1.1,
    e2e_observation: 1.0,
    work_state: 0.7,
    gotcha: 0.8,
    context_cost: 1.3, // a good time to review cost patterns
    workflow_recipe: 0.6,
    prefetch_pattern: 0.4,
  },
});

/**
 * The weight of `type` in `phase`. `type` is null for documents that are not memories (episodes,
 * turns): they have no row entry and weigh `missing`, like any absent type.
 */
export function phaseWeight(
  table: PhaseWeightTable,
  phase: UniversalPhase,
  type: MemoryType | null,
  missing = 1.0,
): number {
  if (type === null) return missing;
  return table[phase][type] ?? missing;
}

function deepFreeze<T extends object>(value: T): T {
  for (const inner of Object.values(value)) {
    if (typeof inner === 'object' && inner !== null) deepFreeze(inner as object);
  }
  return Object.freeze(value);
}
