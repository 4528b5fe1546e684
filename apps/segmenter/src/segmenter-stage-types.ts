import type { LifecycleEvent, Typed } from '@engram/contracts';
import type {
  AnnotationPrompt,
  AnnotationToolCall,
  AnnotationValidation,
  ChainCandidate,
  SegmenterOutput,
  SessionState,
} from '@engram/core';
import type { TopicCodec } from '@engram/core';
import { THREADS_KEY_PREFIX, type LinkEvidence } from './thread-linker';

// What a SegmenterStage is given (topics, codecs, input positions, redaction, embeddings) and
// what its changelog holds (session records, chain records, their keys).

/** Topic names; tests give every run its own. */
export interface SegmenterTopics {
  prompts: string;
  toolCalls: string;
  lifecycle: string;
  boundaries: string;
  episodes: string;
  /** Cross-thread linking decisions (compacted, key decisionId). */
  threadLinks: string;
  /** Compacted, keyed by sessionId, partitioned like the inputs: the per-session state. */
  changelog: string;
}

export const DEFAULT_SEGMENTER_TOPICS: SegmenterTopics = {
  prompts: 'agent.prompts.v1',
  toolCalls: 'agent.tool-calls.v1',
  lifecycle: 'agent.lifecycle.v1',
  boundaries: 'memory.episode-boundaries.v1',
  episodes: 'memory.episodes.v1',
  threadLinks: 'memory.thread-links.v1',
  changelog: 'segmenter.state.v1',
};

export interface SegmenterCodecs {
  prompts: TopicCodec<Typed<'PromptSubmitted'>>;
  toolCalls: TopicCodec<Typed<'ToolCallObserved'>>;
  lifecycle: TopicCodec<LifecycleEvent>;
  boundaries: TopicCodec<unknown>;
  episodes: TopicCodec<unknown>;
  threadLinks: TopicCodec<unknown>;
}

/** Offsets of a partition number in the prompts and tool-calls topics. */
export interface InputOffsets {
  prompts: number;
  toolCalls: number;
}

/**
 * A SessionEnded waiting for the session's prompts and tool calls, which travel on other topics
 * and may not have been processed yet: it takes effect once the group's committed offsets reach
 * the end offsets those topics had when the SessionEnded was read.
 */
export interface PendingEnd {
  at: number;
  until: InputOffsets;
}

/** What the changelog holds per session: the core state plus the open episode's evidence. */
export type ClosedOutput = Extract<SegmenterOutput, { kind: 'closed' }>;

/**
 * A closed episode waiting for its tool calls, which travel on another topic: it is annotated
 * and published once this group has consumed the session's tool-calls partition up to the end
 * offset it had when the episode closed (everything the agent reported before the close).
 */
export interface PendingEpisode {
  output: ClosedOutput;
  untilToolCalls: number;
  crossThreadEpisodeIds: string[];
}

export interface SessionRecord extends LinkEvidence {
  v: 1;
  sessionId: string;
  partition: number;
  session: SessionState | null;
  prompts: AnnotationPrompt[];
  toolCalls: AnnotationToolCall[];
  validations: AnnotationValidation[];
  pendingEnd: PendingEnd | null;
  /** Closed episodes not yet annotated, oldest first. */
  pendingEpisodes?: PendingEpisode[];
}

export type Evidence = Omit<SessionRecord, 'v' | 'sessionId' | 'session'>;

/**
 * A project's recently closed episodes on one partition (those of the partition's sessions): the
 * chaining index as the changelog holds it, newest first, key `CHAIN_KEY_PREFIX + projectId`.
 */
export interface ChainRecord {
  v: 1;
  kind: 'chain';
  partition: number;
  projectId: string;
  episodes: ChainCandidate[];
}

/** Changelog keys of the link state (session records are keyed by the bare sessionId). */
export const CHAIN_KEY_PREFIX = 'segmenter:chain:';
export { THREADS_KEY_PREFIX };

/** A changelog key that holds link state (chaining or recent threads), not a session. */
export function isLinkStateKey(key: string): boolean {
  return key.startsWith(CHAIN_KEY_PREFIX) || key.startsWith(THREADS_KEY_PREFIX);
}

/** Where the inputs are: their current end offsets and how far this group has committed. */
export interface InputPositions {
  endOffsets(partition: number): Promise<InputOffsets>;
  committedOffsets(partitions: number[]): Promise<Map<number, InputOffsets>>;
}

/** Redacts secrets from text before it is kept or published (SPEC §11). */
export type Redactor = (text: string) => string;

/** Embeds texts, one vector each, in order (hybrid mode). */
export type EmbedTexts = (texts: string[]) => Promise<number[][]>;
