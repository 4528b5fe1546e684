import { annotateEpisode, type SegmenterOutput, type StreamSegmenter } from '@engram/core';
import type { AnyStageOutput, RawStageOutput, StageOutput } from '@engram/core';
import { boundaryRecord, episodeRecord } from './episode-records';
import type { SegmenterState } from './segmenter-state';
import {
  CHAIN_KEY_PREFIX,
  type ChainRecord,
  type Evidence,
  type SegmenterCodecs,
  type SegmenterTopics,
  type SessionRecord,
} from './segmenter-stage-types';
import type { ThreadLinker } from './thread-linker';

/**
 * A transaction's outputs: boundaries, annotated episodes once their tool calls are in, thread
 * links, and the changelog records of what changed.
 */
export class SegmenterOutputs {
  constructor(
    private readonly state: SegmenterState,
    private readonly segmenter: StreamSegmenter,
    private readonly linker: ThreadLinker,
    private readonly topics: SegmenterTopics,
    private readonly codecs: SegmenterCodecs,
  ) {}

  recordOf(sessionId: string): SessionRecord | undefined {
    const evidence = this.state.evidence.get(sessionId);
    if (!evidence) return undefined;
    const session = this.segmenter.state(sessionId) ?? null;
    return { v: 1, sessionId, session, ...evidence };
  }

  /**
   * Outputs → records: boundaries at once; closed episodes indexed for chaining and queued for
   * annotation (`toolCallEnds`: how far their tool calls reach); queued episodes whose tool calls
   * are all consumed → annotated episodes; state → changelog.
   */
  finish(outputs: SegmenterOutput[], toolCallEnds = new Map<number, number>()): AnyStageOutput[] {
    const boundaries: unknown[] = [];
    for (const output of outputs) {
      boundaries.push(boundaryRecord(output));
      if (output.kind !== 'closed') continue;
      const { episode } = output;
      const evidence = this.state.evidence.get(episode.sessionId);
      if (!evidence) continue;
      this.state.chainSlice(evidence.partition).add(
        {
          episodeId: episode.episodeId,
          projectId: episode.projectId,
          closedAt: output.at,
          keywords: episode.intentKeywords,
          parentEpisodeId: episode.parentEpisodeId,
        },
        output.at,
      );
      this.state.markChainChanged(evidence.partition, episode.projectId);
      const crossThreadEpisodeIds = evidence.crossThread?.[episode.episodeId] ?? [];
      delete evidence.crossThread?.[episode.episodeId];
      (evidence.pendingEpisodes ??= []).push({
        output,
        untilToolCalls: toolCallEnds.get(evidence.partition) ?? 0,
        crossThreadEpisodeIds,
      });
    }
    return [
      { codec: this.codecs.boundaries, events: boundaries } satisfies StageOutput,
      { codec: this.codecs.episodes, events: this.releaseEpisodes() } satisfies StageOutput,
      { codec: this.codecs.threadLinks, events: this.state.linkRecords } satisfies StageOutput,
      this.changelogOutput(),
    ];
  }

  /** Annotates and releases the queued episodes whose tool calls have all been consumed. */
  private releaseEpisodes(): unknown[] {
    const episodes: unknown[] = [];
    for (const [sessionId, evidence] of this.state.evidence) {
      const queue = evidence.pendingEpisodes;
      if (!queue?.length) continue;
      const consumed = this.state.toolCallsConsumed.get(evidence.partition) ?? 0;
      while (queue.length > 0 && queue[0].untilToolCalls <= consumed) {
        const { output, crossThreadEpisodeIds } = queue.shift()!;
        const annotation = annotateEpisode({
          firstPromptId: output.episode.firstPromptId,
          lastPromptId: output.episode.lastPromptId,
          prompts: evidence.prompts,
          toolCalls: evidence.toolCalls,
          validations: evidence.validations,
          closed: true,
        });
        episodes.push(episodeRecord(output, annotation, crossThreadEpisodeIds));
        pruneEvidence(evidence, output.episode.lastPromptId);
        this.state.touched.add(sessionId);
      }
      // A session that ended (or was dropped) while episodes waited leaves the changelog now.
      if (queue.length === 0 && !this.segmenter.state(sessionId) && !evidence.pendingEnd) {
        this.state.ended.add(sessionId);
      }
    }
    return episodes;
  }

  /** The touched sessions' records (or tombstones for sessions that ended), to their partition. */
  private changelogOutput(): RawStageOutput {
    // The timer's closes and drops are changes too; a dropped session (idle for good, nothing
    // pending) leaves the changelog.
    for (const [sessionId, state] of this.segmenter.takeChanges()) {
      this.state.touched.add(sessionId);
      if (state === null && !this.state.evidence.get(sessionId)?.pendingEnd) {
        this.state.ended.add(sessionId);
      }
    }
    const messages = [...this.state.touched].flatMap((sessionId) => {
      const record = this.recordOf(sessionId);
      if (!record) return [];
      // An ended session leaves the changelog once its last episodes are annotated.
      const gone = this.state.ended.has(sessionId) && !record.pendingEpisodes?.length;
      if (gone) this.state.evidence.delete(sessionId);
      return [
        {
          key: sessionId,
          partition: record.partition,
          value: gone ? null : Buffer.from(JSON.stringify(record)),
        },
      ];
    });
    return { topic: this.topics.changelog, messages: [...messages, ...this.linkStateMessages()] };
  }

  /** The changed chain and thread records (tombstones when emptied), sorted for determinism. */
  private linkStateMessages(): RawStageOutput['messages'] {
    const messages: RawStageOutput['messages'] = [];
    for (const partition of [...this.state.chainChanged.keys()].sort((a, b) => a - b)) {
      const slice = this.state.chainSlices.get(partition);
      for (const projectId of [...this.state.chainChanged.get(partition)!].sort()) {
        const episodes = slice?.episodesOf(projectId) ?? [];
        const record: ChainRecord = { v: 1, kind: 'chain', partition, projectId, episodes };
        messages.push({
          key: CHAIN_KEY_PREFIX + projectId,
          partition,
          value: episodes.length === 0 ? null : Buffer.from(JSON.stringify(record)),
        });
      }
    }
    this.state.chainChanged = new Map();
    for (const { key, partition, value } of this.linker.takeChanges()) {
      messages.push({ key, partition, value: value && Buffer.from(JSON.stringify(value)) });
    }
    return messages;
  }
}

/** Evidence of a closed episode is no longer needed once it is annotated. */
function pruneEvidence(evidence: Evidence, closedUpToPromptId: number): void {
  evidence.prompts = evidence.prompts.filter((p) => p.promptId > closedUpToPromptId);
  evidence.toolCalls = evidence.toolCalls.filter((c) => c.promptId > closedUpToPromptId);
  evidence.validations = [];
}
