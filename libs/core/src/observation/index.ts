// The observer's pure core (SPEC §5, seed 002 §5/§8): signals, co-access, rules, scratchpad,
// promotion. No framework or I/O; the observer service and the embedded mode wire it.
export * from './observer-settings';
export * from './tool-kinds';
export * from './project-paths';
export * from './error-normalisation';
export * from './signals';
export type { DetectorState } from './detector-state';
export { cloneDetectorState, newDetectorState } from './detector-state';
export type { ObservedToolCall } from './observed-call';
export * from './session-signal-detector';
export * from './session-summary';
export * from './seen-events';
export { gitRevertTarget } from './revert-detection';
export { pairKeyOf } from './co-access-detection';
export * from './co-access-graph';
export * from './file-prediction';
export * from './project-stats';
export type {
  CandidateEvidence,
  CandidateFacts,
  InferenceRuleName,
  MemoryCandidate,
} from './candidates';
export { signalEvidence } from './candidates';
export * from './rules';
export * from './scratchpad-records';
export * from './scratchpad';
export * from './scratchpad-lifecycle';
export * from './segment-digest';
export * from './consolidation';
export * from './promotion/validation-filter';
export * from './promotion/scoring';
export * from './promotion/templates';
export * from './promotion/synthesiser';
export * from './promotion/memory-builder';
export * from './promotion/promotion-pipeline';
export * from './promotion/converged-promotion';
export * from './promotion/recent-evidence';
export * from './promotion/repromotion-propagation';
export * from './git-co-commits';
export * from './work-unit-outcome';
export * from './work-unit-outcome-memory';
