import type { EpisodeBoundaryEvent, LifecycleEvent, Typed } from '@engram/contracts';
import type {
  DistillerInputOffsets,
  DistillerRetention,
  DistillerSessionLimits,
  MemoryOptions,
  PromptLimits,
} from '@engram/core';
import type { TopicCodec } from '@engram/core';
import type { EpisodeNarrative } from './episode-summary.stage';
import type { ReflectorWork } from './reflector/reflector-work';
import type { WindowDistiller } from './window-distiller';

// What a DistillerStage is given: its topics and codecs, where its inputs are, its settings.

/** Topic names; tests give every run its own. */
export interface DistillerTopics {
  prompts: string;
  toolCalls: string;
  lifecycle: string;
  /** EpisodeOpened / EpisodeClosed, keyed by sessionId like the agent topics. */
  boundaries: string;
  memories: string;
  /** Compacted, partitioned like the inputs: open sessions and the dedupe keys done. */
  changelog: string;
  /** The segmenter's annotated episodes (key episodeId), annotated again with a summary. */
  episodes: string;
  /** Internal: episode narratives re-keyed by episodeId, partitioned like `episodes`. */
  narratives: string;
  /** Compacted, partitioned like `episodes`: halves of the episode–narrative join. */
  summaryChangelog: string;
  /** Internal: distillations and review decisions keyed by project, the reflector's input. */
  reflector: string;
  /** Compacted, partitioned like `reflector`: each project's reflector state. */
  reflectorChangelog: string;
  /** Compacted, key proposalId: every proposal's latest state. */
  proposals: string;
  /** Internal: each distillation's version of a fact memory, keyed by memoryId (issue #19). */
  memoryCandidates: string;
  /** Compacted, partitioned like `memoryCandidates`: each memory's versions joined. */
  memoryMergeChangelog: string;
}

export const DEFAULT_DISTILLER_TOPICS: DistillerTopics = {
  prompts: 'agent.prompts.v1',
  toolCalls: 'agent.tool-calls.v1',
  lifecycle: 'agent.lifecycle.v1',
  boundaries: 'memory.episode-boundaries.v1',
  memories: 'memory.memories.v1',
  changelog: 'distiller.state.v1',
  episodes: 'memory.episodes.v1',
  narratives: 'distiller.episode-narratives.v1',
  summaryChangelog: 'distiller.episode-summaries.v1',
  reflector: 'distiller.reflector-work.v1',
  reflectorChangelog: 'distiller.reflector.v1',
  proposals: 'memory.proposals.v1',
  memoryCandidates: 'distiller.memory-candidates.v1',
  memoryMergeChangelog: 'distiller.memory-merge.v1',
};

export interface DistillerCodecs {
  prompts: TopicCodec<Typed<'PromptSubmitted'>>;
  toolCalls: TopicCodec<Typed<'ToolCallObserved'>>;
  lifecycle: TopicCodec<LifecycleEvent>;
  boundaries: TopicCodec<EpisodeBoundaryEvent>;
  memories: TopicCodec<Typed<'Memory'>>;
  /** The memories contract on the internal candidates topic. */
  memoryCandidates: TopicCodec<Typed<'Memory'>>;
  episodes: TopicCodec<Typed<'Episode'>>;
  narratives: TopicCodec<EpisodeNarrative>;
  reflector: TopicCodec<ReflectorWork>;
  proposals: TopicCodec<Typed<'Proposal'>>;
}

/** Where the input partitions are: their ends, and how far this group has committed. */
export interface InputPositions {
  endOffsets(partition: number): Promise<DistillerInputOffsets>;
  committedOffsets(partitions: number[]): Promise<Map<number, DistillerInputOffsets>>;
}

/** The distiller's tunables: EngramConfig.distiller in the apps, the defaults in tests. */
export interface DistillerSettings {
  limits: DistillerSessionLimits;
  retention: DistillerRetention;
  /** The segmenter's prompt checks (its settings): what it dead-letters is not distilled. */
  prompts: PromptLimits;
}

export interface DistillerStageOptions {
  /** The changelog's latest record per key, for these partitions. */
  restore: (partitions: number[]) => Promise<Map<string, Buffer>>;
  positions: InputPositions;
  distiller: WindowDistiller;
  /** Redacts secrets from text before it is kept (SPEC §11). */
  redact: (text: string) => string;
  /** The distiller's section of the configuration (EngramConfig.distiller). */
  settings: DistillerSettings;
  /** How long (stream time) a dedupe key is kept after its trigger (default 30 days). */
  dedupeRetentionMs?: number;
  memory?: Partial<MemoryOptions>;
  /** Processing time, for when a session's state may go (default Date.now). */
  clock?: () => number;
}
