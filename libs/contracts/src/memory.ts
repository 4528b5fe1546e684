import type { EpochMillis, EventEnvelope, WorkUnitRef } from './envelope';

export const MEMORY_TYPES = [
  'gotcha',
  'decision',
  'preference',
  'pattern',
  'requirement',
  'error_pattern',
  'module_insight',
  'prefetch_pattern',
  'work_state',
  'causal_dependency',
  'task_calibration',
  'e2e_observation',
  'dead_end',
  'work_unit_outcome',
  'workflow_recipe',
  'context_cost',
] as const;
export type MemoryType = (typeof MEMORY_TYPES)[number];

export const MEMORY_SCOPES = ['global', 'module', 'work_unit', 'session'] as const;
export type MemoryScope = (typeof MEMORY_SCOPES)[number];

export const MEMORY_SOURCES = [
  'agent_explicit',
  'observer_inferred',
  'qa_auto',
  'mcp_auto',
  'commit_auto',
  'user_taught',
  'distilled',
] as const;
export type MemorySource = (typeof MEMORY_SOURCES)[number];

export const RELATION_TYPES = [
  'required_with',
  'conflicts_with',
  'validates',
  'supersedes',
  'derived_from',
] as const;
export type RelationType = (typeof RELATION_TYPES)[number];

export const E2E_OBSERVATION_TYPES = [
  'precondition',
  'timing',
  'ui_behavior',
  'test_sequence',
  'mcp_gotcha',
] as const;
export type E2eObservationType = (typeof E2E_OBSERVATION_TYPES)[number];

/** Exactly one of targetMemoryId / targetFilePath is set. */
export interface MemoryRelation {
  targetMemoryId: string | null;
  targetFilePath: string | null;
  relationType: RelationType;
  confidence: number;
  autoExtracted: boolean;
}

export interface WorkStateDetails {
  /** Plugin-defined state, JSON. */
  methodologyStateJson: string;
}

export interface E2eObservationDetails {
  observationType: E2eObservationType;
  mcpToolUsed: string;
  appState: string | null;
}

export interface DeadEndDetails {
  approachTried: string;
  whyItFailed: string;
  alternativeUsed: string;
  taskContext: string;
}

export interface WorkUnitOutcomeDetails {
  succeeded: boolean;
  filesModified: string[];
  keyDecisions: string[];
  stepsTaken: number;
  contextTokensUsed: number | null;
  retryCount: number;
  failureReason: string | null;
}

export interface RecipeStep {
  order: number;
  description: string;
  canonicalFile: string | null;
  canonicalLine: number | null;
}

export interface WorkflowRecipeDetails {
  taskPattern: string;
  steps: RecipeStep[];
  lastValidatedAt: EpochMillis;
  successCount: number;
}

export interface ContextCostDetails {
  module: string;
  averageTokensPerSession: number;
  p90TokensPerSession: number;
  sampleCount: number;
}

export interface PrefetchPatternDetails {
  /** In > 80 % of sessions touching the module. */
  alwaysReadFiles: string[];
  /** In > 50 %. */
  frequentlyReadFiles: string[];
  moduleTrigger: string;
  sessionCount: number;
}

export interface TaskCalibrationDetails {
  module: string;
  methodology: string;
  averageActualSteps: number;
  averagePlannedSteps: number;
  /** > 1: consistently underestimated. */
  ratio: number;
  sampleCount: number;
}

/**
 * `memory.memories.v1` (compacted, key memoryId; a tombstone deletes): a long-term memory
 * (SPEC §6). The type-specific extras of seed 002 live in the nullable `*Details` fields; the one
 * matching `memoryType` is set, the others are null.
 */
export interface Memory extends EventEnvelope {
  /** uuid v5 of tenant, project, type and normalised content or natural key. */
  memoryId: string;
  /** SPEC §6 `type`; renamed because `type` is the record tag of replay lines (SPEC §12). */
  memoryType: MemoryType;
  content: string;
  /** 0..1 */
  confidence: number;
  tags: string[];
  relatedFiles: string[];
  relatedModules: string[];
  createdAt: EpochMillis;
  lastAccessedAt: EpochMillis;
  accessCount: number;
  workUnitRef: WorkUnitRef | null;
  scope: MemoryScope;
  source: MemorySource;
  episodeId: string | null;
  commitSha: string | null;
  provenanceSessionIds: string[];
  /** eventIds of the events it was derived from (provenance). */
  sourceEventIds: string[];
  targetNodeId: string | null;
  relations: MemoryRelation[];
  /** Null: the type's default half-life. */
  decayHalfLifeDays: number | null;
  needsReview: boolean;
  userVerified: boolean;
  citationText: string | null;
  staleAt: EpochMillis | null;
  embedding: number[] | null;
  embeddingModel: string | null;
  workState: WorkStateDetails | null;
  e2eObservation: E2eObservationDetails | null;
  deadEnd: DeadEndDetails | null;
  workUnitOutcome: WorkUnitOutcomeDetails | null;
  workflowRecipe: WorkflowRecipeDetails | null;
  contextCost: ContextCostDetails | null;
  prefetchPattern: PrefetchPatternDetails | null;
  taskCalibration: TaskCalibrationDetails | null;
}
