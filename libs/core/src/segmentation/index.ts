export * from './intent-keywords';
export * from './entities';
export * from './topic-similarity';
export * from './annotation';
export * from './annotation-types';
export * from './tool-activity';
export * from './chaining';
export * from './cross-thread';
export * from './cross-thread-decision';
export type {
  ContinuityAssessmentInput,
  LlmAssessmentStatus,
  LlmContinuityAssessment,
  LlmContinuityAssessor,
} from './cross-thread-llm';
export * from './cross-thread-outcome';
export * from './cross-thread-tuning';
export * from './boundary';
export * from './segmenter-settings';
export * from './session-segmenter';
export * from './prompt-validation';
export * from './stream-segmenter';
export * from './metrics';
export * from './learned-boundary';
export * from './recent-threads';
