// What episode annotation (annotation.ts) reads and writes, and its settings.

export type AnnotationOutcome = 'success' | 'failure' | 'partial' | 'ongoing' | 'unknown';

/** The fields of a ToolCallObserved (agent.tool-calls.v1) the annotation reads. */
export interface AnnotationToolCall {
  /** When given, duplicates (same eventId) count once. */
  eventId?: string;
  promptId: number;
  stepIndex: number;
  toolName: string;
  filePaths: readonly string[];
  command: string | null;
  outcome: 'ok' | 'error';
  errorMessage: string | null;
  timestamp: number;
  agentId: string;
  userId: string | null;
  mcp: boolean;
}

/** The fields of a PromptSubmitted (agent.prompts.v1) the annotation reads. */
export interface AnnotationPrompt {
  eventId?: string;
  promptId: number;
  source: 'user' | 'agent' | 'system';
  text: string;
  timestamp: number;
  agentId: string;
  userId: string | null;
  methodology: string | null;
  methodologyPhase: string | null;
}

/**
 * A QA verdict that applies to the episode: ValidationPassed (`passed: true`), ValidationFailed
 * (`false`) or SubtaskValidated (`succeeded`). The caller decides which validations belong to
 * the episode (they carry no prompt id); all given ones are used.
 */
export interface AnnotationValidation {
  passed: boolean;
  timestamp: number;
}

export interface EpisodeAnnotationInput {
  firstPromptId: number;
  lastPromptId: number;
  /** Prompts of the session; those outside [firstPromptId, lastPromptId] are ignored. */
  prompts: readonly AnnotationPrompt[];
  /** Tool calls of the session; those serving a prompt outside the range are ignored. */
  toolCalls: readonly AnnotationToolCall[];
  validations?: readonly AnnotationValidation[];
  /** Whether the episode has closed (an open episode's outcome is `ongoing`). */
  closed: boolean;
}

export interface AnnotationHotFile {
  path: string;
  touches: number;
}

export interface EpisodeAnnotation {
  obsCount: number;
  investigate: number;
  execute: number;
  failures: number;
  /** Most touched first, then by path; at most `maxHotFiles`. */
  hotFiles: AnnotationHotFile[];
  /** From the first (user) prompt to the last event; 0 without events. */
  durationMs: number;
  startedAt: number | null;
  lastEventAt: number | null;
  /** Distinct tool names, most used first, then by name. */
  toolsUsed: string[];
  /** Distinct user ids (first seen first), then distinct agent ids (first seen first). */
  participants: string[];
  /** Most mentioned first, then first seen; at most `maxEntities`. */
  entities: string[];
  outcome: AnnotationOutcome;
  tags: string[];
  keyDecisions: string[];
  /** A representative user prompt: the first non-terse one. */
  intent: string | null;
}

export interface AnnotationOptions {
  maxHotFiles: number;
  maxEntities: number;
  maxKeyDecisions: number;
  /** Characters kept of one key decision. */
  maxDecisionChars: number;
  /** Characters kept of the intent prompt. */
  maxIntentChars: number;
  /** A prompt of fewer words is terse (SPEC §4.2: 5). */
  terseWordCount: number;
  /** investigate ≥ ratio × execute → investigate-heavy (and the other way round). */
  heavyActivityRatio: number;
  /** Fewer investigate + execute calls than this get no activity tag. */
  minActivityForTag: number;
  /** This many failed calls in a row → `stuck-loop`. */
  stuckLoopLength: number;
}

export const DEFAULT_ANNOTATION_OPTIONS: Readonly<AnnotationOptions> = Object.freeze({
  maxHotFiles: 10,
  maxEntities: 20,
  maxKeyDecisions: 5,
  maxDecisionChars: 200,
  maxIntentChars: 500,
  terseWordCount: 5,
  heavyActivityRatio: 2,
  minActivityForTag: 3,
  stuckLoopLength: 3,
});
