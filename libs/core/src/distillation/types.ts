import type { EpochMillis, PromptSubmitted, ToolCallObserved } from '@engram/contracts';

/**
 * Seed 001's three priorities. 🔴 durable (stated rules, decisions with rationale, root causes and
 * fixes, state changes, corrections), 🟡 working context, 🟢 ephemeral.
 */
export const PRIORITIES = ['🔴', '🟡', '🟢'] as const;
export type Priority = (typeof PRIORITIES)[number];

/** Words for the priorities, for tags and logs where emoji are awkward. */
export const PRIORITY_NAMES: Readonly<Record<Priority, 'high' | 'medium' | 'low'>> = {
  '🔴': 'high',
  '🟡': 'medium',
  '🟢': 'low',
};

/** Lower rank = more durable. */
export function priorityRank(priority: Priority): number {
  return PRIORITIES.indexOf(priority);
}

/**
 * Why the extractive distiller kept a fact. LLM facts have no kind (null); their memory type is
 * read from their content instead.
 */
export const FACT_KINDS = [
  'rule',
  'preference',
  'correction',
  'decision',
  'state-change',
  'idea',
  'error-resolution',
  'error-unresolved',
  'command-fix',
  'file-change',
  'exploration',
] as const;
export type FactKind = (typeof FACT_KINDS)[number];

/** One retained fact of a segment (seed 001 `* 🔴 (09:15) …`). */
export interface DistilledFact {
  priority: Priority;
  /** `HH:MM` (UTC) of an event of the window, or null: never a time the transcript lacks. */
  time: string | null;
  /** Epoch millis of the event the time comes from, or null. */
  at: EpochMillis | null;
  text: string;
  kind: FactKind | null;
  /** eventIds of the events this fact was derived from. */
  sourceEventIds: string[];
  relatedFiles: string[];
}

/** A coherent part of the window: narrative (1–3 sentences) plus retained facts. */
export interface DistilledSegment {
  /** The episode the segment covers, when known. */
  episodeId: string | null;
  title: string | null;
  narrative: string | null;
  facts: DistilledFact[];
  sourceEventIds: string[];
}

export type DistillationMethod = 'llm' | 'extractive';

export const TRIGGER_KINDS = ['EpisodeClosed', 'SessionEnded', 'CompactionPending'] as const;
export type TriggerKind = (typeof TRIGGER_KINDS)[number];

/** The result of distilling one trigger's window. */
export interface Distillation {
  /** sha256(sessionId + trigger + firstEntryTimestamp): the idempotency key. */
  dedupeKey: string;
  tenantId: string;
  projectId: string;
  sessionId: string;
  episodeId: string | null;
  trigger: TriggerKind;
  /** Timestamp of the trigger event (a fallback time that is not invented). */
  triggerAt: EpochMillis;
  method: DistillationMethod;
  firstEntryAt: EpochMillis | null;
  lastEntryAt: EpochMillis | null;
  /** `YYYY-MM-DD` (UTC) of the first entry, or null for an empty window. */
  date: string | null;
  segments: DistilledSegment[];
  currentTask: string | null;
  suggestedResponse: string | null;
  /** Every event of the window. */
  sourceEventIds: string[];
}

/** The fields of a PromptSubmitted the distiller reads. */
export type DistillPrompt = Pick<
  PromptSubmitted,
  | 'eventId'
  | 'sessionId'
  | 'promptId'
  | 'source'
  | 'text'
  | 'timestamp'
  | 'agentId'
  | 'userId'
  | 'methodology'
  | 'methodologyPhase'
>;

/** The fields of a ToolCallObserved the distiller reads. */
export type DistillToolCall = Pick<
  ToolCallObserved,
  | 'eventId'
  | 'sessionId'
  | 'promptId'
  | 'stepIndex'
  | 'toolName'
  | 'filePaths'
  | 'command'
  | 'outcome'
  | 'errorMessage'
  | 'timestamp'
  | 'agentId'
  | 'userId'
  | 'mcp'
>;

/** A QA verdict in the window (ValidationPassed / ValidationFailed / SubtaskValidated). */
export interface DistillValidation {
  eventId: string;
  passed: boolean;
  timestamp: EpochMillis;
}

/** A prompt range that forms one segment (an episode of the segmenter). */
export interface SegmentRange {
  episodeId: string | null;
  firstPromptId: number;
  lastPromptId: number;
}
