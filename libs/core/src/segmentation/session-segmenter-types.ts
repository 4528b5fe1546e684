import type { BoundaryRule } from './boundary';
import type { SegmenterSettings } from './segmenter-settings';

// The segmenter's types (session-segmenter.ts): the prompts it reads, the state it keeps per
// session, the episodes and decisions it outputs.

/** Why an episode closed (SPEC §3 `reason`). */
export type BoundaryReason =
  | 'intent_shift'
  | 'thread_inactivity'
  | 'explicit_thread'
  | 'session_end'
  | 'size_limit'
  | 'time_limit';

/** The fields of a PromptSubmitted the segmenter reads (the contract type satisfies it). */
export interface SegmenterPrompt {
  eventId: string;
  tenantId: string;
  projectId: string;
  sessionId: string;
  agentId: string;
  userId: string | null;
  timestamp: number;
  promptId: number;
  source: 'user' | 'agent' | 'system';
  channel: string;
  channelKind: 'explicit' | 'implicit';
  explicitThreadId: string | null;
  text: string;
  parentEpisodeId: string | null;
}

export interface OpenEpisode {
  episodeId: string;
  threadId: string;
  firstPromptId: number;
  lastPromptId: number;
  startedAt: number;
  lastActivityAt: number;
  /** The accumulated intent keywords (seed 000's episode bag). */
  bag: string[];
  /** Sum of the prompt embeddings (hybrid mode) and how many were added. */
  centroidSum: number[] | null;
  centroidCount: number;
  /**
   * The last `hybridWindow` prompt embeddings, oldest first (hybrid mode with a window; absent in
   * states written before the window existed, which then compare with the whole centroid).
   */
  recentEmbeddings?: number[][];
  userPromptCount: number;
  /** The first non-terse user prompt: the episode's stated intent. */
  intent: string | null;
  parentEpisodeId: string | null;
  /** eventIds of the user prompts (provenance). */
  sourceEventIds: string[];
  openedBy: BoundaryReason | null;
}

export interface ThreadState {
  threadId: string;
  explicit: boolean;
  createdAt: number;
  lastActivityAt: number;
  channels: string[];
  turnCount: number;
  /**
   * Set when the timer closed the thread's episode (time limit) between prompts: the next prompt
   * opens its episode with this reason, exactly as if it had found the limit itself.
   */
  pendingReason: BoundaryReason | null;
}

/** Everything the segmenter keeps per session; plain JSON (it lives in a compacted changelog). */
export interface SessionState {
  sessionId: string;
  tenantId: string;
  projectId: string;
  userId: string | null;
  thread: ThreadState | null;
  episode: OpenEpisode | null;
  lastPromptId: number | null;
  /** Recent eventIds, newest last: a redelivered event changes nothing. */
  recentEventIds: string[];
  /** Latest event time seen (the session's clock). */
  clock: number;
}

/** A closed or opened episode as the service publishes it. */
export interface EpisodeSnapshot {
  episodeId: string;
  threadId: string;
  tenantId: string;
  projectId: string;
  sessionId: string;
  userId: string | null;
  firstPromptId: number;
  lastPromptId: number;
  startedAt: number;
  endedAt: number | null;
  intentKeywords: string[];
  intent: string | null;
  userPromptCount: number;
  parentEpisodeId: string | null;
  sourceEventIds: string[];
}

export type SegmenterOutput =
  | {
      kind: 'opened';
      at: number;
      episode: EpisodeSnapshot;
      reason: BoundaryReason | null;
      similarity: number | null;
      threshold: number | null;
    }
  | {
      kind: 'closed';
      at: number;
      episode: EpisodeSnapshot;
      reason: BoundaryReason;
      similarity: number | null;
      threshold: number | null;
    };

/** One line of `engram segment` (SPEC §12), plus the rule and threshold that decided. */
export interface PromptDecision {
  eventId: string;
  sessionId: string;
  promptId: number;
  threadId: string | null;
  episodeId: string | null;
  boundary: boolean;
  reason: BoundaryReason | null;
  similarity: number | null;
  threshold: number | null;
  rule: BoundaryRule | 'duplicate' | 'not_user' | 'first' | 'limit' | 'thread';
}

export interface StepResult {
  state: SessionState;
  outputs: SegmenterOutput[];
}

export interface PromptStepResult extends StepResult {
  decision: PromptDecision;
}

/** Picks the parent of a new episode (seed 003 chaining); absent → only explicit parents. */
export type ParentFinder = (opening: {
  projectId: string;
  keywords: readonly string[];
  embedding: readonly number[] | null;
  at: number;
  excludeEpisodeId: string;
}) => string | null;

export interface StepContext {
  settings: SegmenterSettings;
  /** The prompt's embedding (hybrid mode; computed by the caller, so the core stays pure). */
  embedding?: readonly number[] | null;
  findParent?: ParentFinder;
}
