import type { EpochMillis, EventEnvelope, WorkUnitRef } from './envelope';

export const BOUNDARY_REASONS = [
  'intent_shift',
  'thread_inactivity',
  'explicit_thread',
  'session_end',
  'size_limit',
  'time_limit',
] as const;
export type BoundaryReason = (typeof BOUNDARY_REASONS)[number];

export const EPISODE_OUTCOMES = ['success', 'failure', 'partial', 'ongoing', 'unknown'] as const;
export type EpisodeOutcome = (typeof EPISODE_OUTCOMES)[number];

// `memory.episode-boundaries.v1` is a top-level Avro union of EpisodeOpened and EpisodeClosed.

export interface EpisodeOpened extends EventEnvelope {
  /** uuid v5 of sessionId + firstPromptId. */
  episodeId: string;
  threadId: string;
  firstPromptId: number;
  /** Equal to firstPromptId when the episode opens. */
  lastPromptId: number;
  intentKeywords: string[];
  /** Why the thread's previous episode closed; null for the first episode. */
  reason: BoundaryReason | null;
  similarity: number | null;
  threshold: number | null;
  parentEpisodeId: string | null;
}

export interface EpisodeClosed extends EventEnvelope {
  episodeId: string;
  threadId: string;
  firstPromptId: number;
  lastPromptId: number;
  /** The accumulated keyword bag. */
  intentKeywords: string[];
  reason: BoundaryReason;
  similarity: number | null;
  threshold: number | null;
  userPromptCount: number;
}

export interface HotFile {
  path: string;
  touches: number;
}

/** `memory.episodes.v1` (compacted, key episodeId): the annotated episode (SPEC §4.4). */
export interface Episode extends EventEnvelope {
  episodeId: string;
  threadId: string;
  firstPromptId: number;
  lastPromptId: number;
  startedAt: EpochMillis;
  endedAt: EpochMillis | null;
  closeReason: BoundaryReason | null;
  intentKeywords: string[];
  /** A representative prompt of the episode. */
  intent: string | null;
  obsCount: number;
  /** Reads and searches. */
  investigate: number;
  /** Edits, writes and commands. */
  execute: number;
  failures: number;
  /** Most touched first. */
  hotFiles: HotFile[];
  durationMs: number;
  toolsUsed: string[];
  participants: string[];
  entities: string[];
  outcome: EpisodeOutcome;
  tags: string[];
  keyDecisions: string[];
  parentEpisodeId: string | null;
  crossThreadEpisodeIds: string[];
  /** From the distiller, when it has run. */
  summary: string | null;
  workUnitRef: WorkUnitRef | null;
  /** eventIds of the episode's user prompts (provenance). */
  sourceEventIds: string[];
}
