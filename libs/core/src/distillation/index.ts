/**
 * Distillation (SPEC §8, seed 001): episodes and sessions into narratives and prioritised facts,
 * facts into memories, a reflector that condenses distillations into reviewable proposals, the
 * review state machine, and MEMORY.md. Pure and deterministic: no I/O, no clock (`now` is a
 * parameter), times only from events. Token counts use the same four-characters-a-token rule as
 * retrieval's `estimateTokens` (not re-exported here, so the two contexts can share the index).
 */
export {
  FACT_KINDS,
  PRIORITIES,
  PRIORITY_NAMES,
  TRIGGER_KINDS,
  priorityRank,
  type Distillation,
  type DistillationMethod,
  type DistilledFact,
  type DistilledSegment,
  type DistillPrompt,
  type DistillToolCall,
  type DistillValidation,
  type FactKind,
  type Priority,
  type SegmentRange,
  type TriggerKind,
} from './types';
export { clockTime, isoDay, compactDay, formatDuration, MS_PER_DAY } from './time';
export {
  MIN_USER_MESSAGES_FOR_SESSION_END,
  distillationDedupeKey,
  distillationWindow,
  type DistillationTrigger,
  type DistillationWindow,
  type SessionEvents,
  type WindowDecision,
} from './triggers';
export {
  buildTranscript,
  renderEntry,
  DEFAULT_RENDER_OPTIONS,
  type PromptEntry,
  type RenderOptions,
  type ToolEntry,
  type TranscriptEntry,
} from './transcript';
export {
  DISTILLER_SYSTEM_PROMPT,
  DEFAULT_DISTILLATION_PROMPT_OPTIONS,
  buildDistillationPrompt,
  type DistillationPrompt,
  type DistillationPromptOptions,
} from './distill-prompt';
export { formatFact, parseFactLine, type FactLine } from './fact-lines';
export {
  parseDistillerOutput,
  type ParseOptions,
  type ParsedDistillerOutput,
  type ParsedSegment,
  type ParseStatus,
} from './output-parser';
export { distillationFromLlmOutput, type LlmDistillationResult } from './llm-distillation';
export {
  episodeSummary,
  formatDistillation,
  formatSegmentsForLog,
  optimizeDistillationForContext,
  optimizeForContext,
} from './format';
export { distillExtractively } from './extractive/extractive-distiller';
export { classifyAssertions, classifySentence, type Assertion } from './extractive/assertions';
export { commandWords, similarCommands } from './extractive/errors';
export { topicWords } from './extractive/narrative';
export { filePathsIn } from './files-in-text';
export {
  DISTILLED_HALF_LIFE_DAYS,
  PRIORITY_CONFIDENCE,
  PRIORITY_HALF_LIFE_CAP_DAYS,
  halfLifeDaysOf,
  memoryTypeOf,
  type DistilledMemoryType,
} from './memory-types';
export {
  DEFAULT_MEMORY_OPTIONS,
  distillationToMemories,
  factMemoryId,
  memoryIdOf,
  normaliseContent,
  workStateMemoryId,
  type MemoryOptions,
} from './memories';
export {
  DEFAULT_REFLECTION_HOUR_UTC,
  REFLECTION_TOKEN_THRESHOLD,
  dayTokens,
  distillationTokens,
  reflectionDecision,
  reflectionGuardKey,
  type ReflectionDecision,
  type ReflectionGuardInput,
} from './reflector/reflection-trigger';
export {
  COMPRESSION_GUIDANCE,
  MAX_COMPRESSION_LEVEL,
  compressionDecision,
  validateCompression,
  type CompressionDecision,
  type CompressionLevel,
} from './reflector/compression';
export {
  GRADIENT_AGE_DAYS,
  applyTemporalGradient,
  condense,
  type GradedDistillation,
} from './reflector/temporal-gradient';
export { sectionNamed, sectionOf } from './reflector/sections';
export {
  MERGE_SIMILARITY,
  memoryLine,
  reflectExtractively,
  type ReflectionInput,
  type ReflectionResult,
} from './reflector/extractive-reflector';
export {
  REFLECTOR_SYSTEM_PROMPT,
  buildReflectorPrompt,
  renderProposalsText,
  type ReflectorPrompt,
  type ReflectorPromptOptions,
} from './reflector/reflector-prompt';
export {
  EVIDENCE_SIMILARITY,
  evaluateReflectorAttempt,
  parseReflectorOutput,
  proposalsFromReflectorOutput,
  type ParsedReflectorOutput,
  type ReflectorAttempt,
} from './reflector/reflector-output';
export {
  DUPLICATE_SIMILARITY,
  evidenceOf,
  type ExistingReview,
  type SkippedDraft,
} from './reflector/proposal-builder';
export {
  REFLECTION_SECTIONS,
  type ProposalEvidence,
  type ProposalTransition,
  type ReflectionSection,
  type ReviewActionKind,
  type ReviewProposal,
} from './proposals/types';
export { nextProposalIds, parseProposalId, proposalId } from './proposals/proposal-ids';
export {
  PROPOSAL_TTL_DAYS,
  applyReviewAction,
  expireDue,
  expiryOf,
  transitionLogLine,
  type ReviewAction,
  type ReviewErrorCode,
  type ReviewOutcome,
} from './proposals/review';
export {
  PROMOTED_CONFIDENCE,
  SECTION_MEMORY_TYPES,
  promotedMemory,
  sectionTag,
} from './proposals/promotion';
export { fromProposalRecord, toProposalRecord } from './proposals/proposal-record';
export { curatedMemories, memorySection, renderMemoryMd, type MemoryMdOptions } from './memory-md';
export * from './distiller-session';
export { canonicalVersions, windowOrderKey } from './memory-versions';
export {
  joinAllMemoryVersions,
  joinMemoryVersions,
  MAX_PROVENANCE_IDS,
  normaliseMemoryVersion,
} from './memory-join';
export {
  DEFAULT_REFLECTOR_RETENTION,
  addDistillation,
  applyReviewCommand,
  emptyReflectorState,
  expireProjectProposals,
  projectReflectionDecision,
  pruneReflectorState,
  recordReflection,
  reflectionInputOf,
  unreflected,
  type CommandOutcome,
  type ProjectReflectionDecision,
  type ReflectionSchedule,
  type ReflectorProjectState,
  type ReflectorRetention,
  type ReviewCommand,
} from './reflector/project-reflection';
