import type { LifecycleEvent, Typed } from '@engram/contracts';
import type { MemoriesWithFiles, ObserverSettings } from '@engram/core';
import type { TopicCodec } from '@engram/core';
import type { ObserverGraphWriter } from '@engram/core';

// What an ObserverStage is given: its topics and codecs, where its inputs are, its settings.

/** Topic names; tests give every run its own. */
export interface ObserverTopics {
  toolCalls: string;
  lifecycle: string;
  /** Compacted, partitioned like the inputs: per-session state and scratchpads. */
  changelog: string;
  /** Internal, keyed by project: signals, session summaries and promotions for the project stage. */
  projectWork: string;
  /** Compacted, keyed by project: each project's statistics (the project stage's changelog). */
  projectState: string;
  /** Promoted memories (SPEC §3, compacted, key memoryId). */
  memories: string;
  /** The segmenter's annotated episodes (an input: their prompt ranges name memories' episodes). */
  episodes: string;
}

export const DEFAULT_OBSERVER_TOPICS: ObserverTopics = {
  toolCalls: 'agent.tool-calls.v1',
  lifecycle: 'agent.lifecycle.v1',
  changelog: 'observer.state.v1',
  projectWork: 'observer.project-work.v1',
  projectState: 'observer.project-state.v1',
  memories: 'memory.memories.v1',
  episodes: 'memory.episodes.v1',
};

export interface ObserverCodecs {
  toolCalls: TopicCodec<Typed<'ToolCallObserved'>>;
  lifecycle: TopicCodec<LifecycleEvent>;
}

/** Where the tool-calls partitions are: their end offsets and how far this group committed. */
export interface ToolCallPositions {
  endOffset(partition: number): Promise<number>;
  committedOffsets(partitions: number[]): Promise<Map<number, number>>;
}

export interface ObserverStageOptions {
  settings: ObserverSettings;
  /** The changelog's latest record per key, for these partitions. */
  restore: (partitions: number[]) => Promise<Map<string, Buffer>>;
  writer: ObserverGraphWriter;
  positions: ToolCallPositions;
  /** Redacts secrets from text before it is kept or written (SPEC §11). */
  redact: (text: string) => string;
  /** The project's root, to place absolute paths (null: absolute paths are rejected). */
  projectRootOf?: (tenantId: string, projectId: string) => string | null;
  /** A session silent this long (its partition's watermark) is finished without a SessionEnded. */
  sessionIdleMs?: number;
  /**
   * The project's memories naming files (the compacted memory topic), for the sweep against a
   * FileManifest (issue #20). Absent: manifests leave the memories alone.
   */
  memoriesWithFiles?: MemoriesWithFiles;
}
