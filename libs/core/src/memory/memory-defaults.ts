import type { Memory } from '@engram/contracts';

/** The type-specific extras of a memory (seed 002 §4): at most the one matching its type is set. */
export type MemoryDetails = Pick<
  Memory,
  | 'workState'
  | 'e2eObservation'
  | 'deadEnd'
  | 'workUnitOutcome'
  | 'workflowRecipe'
  | 'contextCost'
  | 'prefetchPattern'
  | 'taskCalibration'
>;

/** Every type-specific extra null: spread into a memory whose type has none (or to fill one in). */
export const NO_MEMORY_DETAILS: Readonly<MemoryDetails> = Object.freeze({
  workState: null,
  e2eObservation: null,
  deadEnd: null,
  workUnitOutcome: null,
  workflowRecipe: null,
  contextCost: null,
  prefetchPattern: null,
  taskCalibration: null,
});
