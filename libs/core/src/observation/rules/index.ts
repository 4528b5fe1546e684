import type { MemoryType } from '@engram/contracts';
import type { InferenceRuleName, MemoryCandidate } from '../candidates';
import { causalDependencyRule } from './causal-dependency.rule';
import { contextCostRule } from './context-cost.rule';
import { deadEndRule } from './dead-end.rule';
import { e2eObservationRule } from './e2e-observation.rule';
import { errorPatternRule } from './error-pattern.rule';
import { gotchaRule } from './gotcha.rule';
import type { InferenceInput } from './inference-input';
import { moduleInsightRule } from './module-insight.rule';
import { prefetchPatternRule } from './prefetch-pattern.rule';
import { qaFailureRule } from './qa-failure.rule';
import { rememberRequestRule } from './remember-request.rule';
import { taskCalibrationRule } from './task-calibration.rule';
import { workflowRecipeRule } from './workflow-recipe.rule';

export interface InferenceRule {
  name: InferenceRuleName;
  /** The memory type it proposes (remember_request: the note's own type). */
  memoryType: MemoryType | 'as_requested';
  /** The condition, as SPEC §5 / seed 002 §5 state it. */
  when: string;
  infer: (input: InferenceInput) => MemoryCandidate[];
}

/** The inference rules table (SPEC §5, seed 002 §5), in the order candidates are listed. */
export const INFERENCE_RULES: readonly InferenceRule[] = [
  {
    name: 'causal_dependency',
    memoryType: 'causal_dependency',
    when: 'files co-accessed within 3 steps in >= 3 sessions',
    infer: causalDependencyRule,
  },
  {
    name: 'module_insight',
    memoryType: 'module_insight',
    when: 'a file read 4+ times in a session without an edit',
    infer: moduleInsightRule,
  },
  {
    name: 'error_pattern',
    memoryType: 'error_pattern',
    when: 'the same tool error 3+ times',
    infer: errorPatternRule,
  },
  {
    name: 'gotcha',
    memoryType: 'gotcha',
    when: 'an edit re-edited within 5 steps',
    infer: gotchaRule,
  },
  {
    name: 'prefetch_pattern',
    memoryType: 'prefetch_pattern',
    when: 'a file in > 80 % / > 50 % of the sessions touching a module',
    infer: prefetchPatternRule,
  },
  {
    name: 'dead_end',
    memoryType: 'dead_end',
    when: 'an approach fully reverted (or reverted after 20+ steps)',
    infer: deadEndRule,
  },
  {
    name: 'context_cost',
    memoryType: 'context_cost',
    when: 'tokens per session of a module, last 30 sessions',
    infer: contextCostRule,
  },
  {
    name: 'task_calibration',
    memoryType: 'task_calibration',
    when: 'actual vs planned steps of a module',
    infer: taskCalibrationRule,
  },
  {
    name: 'workflow_recipe',
    memoryType: 'workflow_recipe',
    when: 'the same 4+ step sequence in 3+ successful sessions of a module within 30 days',
    infer: workflowRecipeRule,
  },
  {
    name: 'qa_failure',
    memoryType: 'error_pattern',
    when: 'a critical or high QA failure',
    infer: qaFailureRule,
  },
  {
    name: 'e2e_observation',
    memoryType: 'e2e_observation',
    when: "a QA agent's browser tool failed, needed a step first, waited, or saw an error",
    infer: e2eObservationRule,
  },
  {
    name: 'remember_request',
    memoryType: 'as_requested',
    when: "the agent's remember_this",
    infer: rememberRequestRule,
  },
];

/** Every rule's candidates; a key proposed twice (two rules, same memory) keeps the first. */
export function inferCandidates(
  input: InferenceInput,
  rules: readonly InferenceRule[] = INFERENCE_RULES,
): MemoryCandidate[] {
  const byKey = new Map<string, MemoryCandidate>();
  for (const rule of rules) {
    for (const candidate of rule.infer(input)) {
      if (!byKey.has(candidate.key)) byKey.set(candidate.key, candidate);
    }
  }
  return [...byKey.values()];
}

export type { InferenceInput } from './inference-input';
export { classifyNote } from './remember-request.rule';
export { RECIPE_MIN_STEPS } from './workflow-recipe.rule';
