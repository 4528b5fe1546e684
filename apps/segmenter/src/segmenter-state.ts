import { RecentEpisodeIndex, type ChainCandidate } from '@engram/core';
import type { Evidence } from './segmenter-stage-types';

/**
 * The segmenter's state in memory beside the StreamSegmenter's sessions: each session's evidence,
 * the chaining index per partition, and what the open transaction changed.
 */
export class SegmenterState {
  readonly evidence = new Map<string, Evidence>();
  readonly restored = new Set<number>();
  owned = new Set<number>();
  /**
   * The chaining index per input partition (an episode belongs to its session's partition):
   * persisted in the changelog one record per project, restored and forgotten with the partition.
   * Candidates come from every partition this instance holds.
   */
  readonly chainSlices = new Map<number, RecentEpisodeIndex>();
  /** Projects whose chain record changed in the open transaction, per partition. */
  chainChanged = new Map<number, Set<string>>();
  /** Thread-link decisions and outcomes of the open transaction. */
  linkRecords: unknown[] = [];
  /** How far the tool-calls partitions are consumed (this transaction's batch included). */
  toolCallsConsumed = new Map<number, number>();
  /** Sessions ended in the open transaction: their changelog entry becomes a tombstone. */
  ended = new Set<string>();
  /** Sessions changed in the open transaction: their changelog entry is rewritten. */
  touched = new Set<string>();

  chainCandidates(projectId: string, at: number): readonly Readonly<ChainCandidate>[] {
    if (this.chainSlices.size === 1) {
      for (const slice of this.chainSlices.values()) return slice.candidates(projectId, at);
    }
    return [...this.chainSlices.keys()]
      .sort((a, b) => a - b)
      .flatMap((partition) => this.chainSlices.get(partition)!.candidates(projectId, at));
  }

  chainSlice(partition: number): RecentEpisodeIndex {
    let slice = this.chainSlices.get(partition);
    if (!slice) {
      slice = new RecentEpisodeIndex();
      this.chainSlices.set(partition, slice);
    }
    return slice;
  }

  markChainChanged(partition: number, projectId: string): void {
    let projects = this.chainChanged.get(partition);
    if (!projects) {
      projects = new Set();
      this.chainChanged.set(partition, projects);
    }
    projects.add(projectId);
  }

  evidenceOf(sessionId: string, partition: number) {
    let evidence = this.evidence.get(sessionId);
    if (!evidence) {
      evidence = {
        partition,
        prompts: [],
        toolCalls: [],
        validations: [],
        pendingEnd: null,
        crossThread: {},
        awaitingOutcome: null,
        pendingEpisodes: [],
      };
      this.evidence.set(sessionId, evidence);
    }
    return evidence;
  }
}
