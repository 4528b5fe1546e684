import type { LifecycleEvent, Typed } from '@engram/contracts';
import {
  type LlmContinuityAssessor,
  RecentEpisodeIndex,
  chooseParentEpisode,
  StreamSegmenter,
  type SegmenterOutput,
  type SegmenterSettings,
} from '@engram/core';
import type { AnyStageOutput, Delivered, ExactlyOnceStage } from '@engram/core';
import { SegmenterEventHandler } from './segmenter-event-handler';
import { SegmenterOutputs } from './segmenter-outputs';
import { SegmenterState } from './segmenter-state';
import type {
  ChainRecord,
  EmbedTexts,
  InputOffsets,
  InputPositions,
  Redactor,
  SegmenterCodecs,
  SegmenterTopics,
  SessionRecord,
} from './segmenter-stage-types';
import { ThreadLinker, type ThreadsRecord } from './thread-linker';

export {
  CHAIN_KEY_PREFIX,
  DEFAULT_SEGMENTER_TOPICS,
  isLinkStateKey,
  THREADS_KEY_PREFIX,
  type ChainRecord,
  type EmbedTexts,
  type InputOffsets,
  type InputPositions,
  type PendingEnd,
  type PendingEpisode,
  type Redactor,
  type SegmenterCodecs,
  type SegmenterTopics,
  type SessionRecord,
} from './segmenter-stage-types';

/**
 * The segmenter as an exactly-once stage (SPEC §4.5). Prompts move boundaries, tool calls and
 * validations are kept as evidence for the annotation at close, SessionEnded closes. Every batch
 * writes its outputs and the changed sessions' state (changelog) in the transaction that commits
 * its offsets. State of a partition is restored from the changelog before its first batch is
 * processed; an aborted transaction drops all in-memory state, so the next batch restores what
 * was committed. (Aborts are rare; copying every touched session for a rollback made each batch
 * pay for them — it cost more than the segmentation itself.)
 *
 * The in-memory state is in SegmenterState (segmenter-state.ts), what each event does in
 * SegmenterEventHandler (segmenter-event-handler.ts), a transaction's outputs in SegmenterOutputs
 * (segmenter-outputs.ts).
 */
export class SegmenterStage {
  private readonly segmenter: StreamSegmenter;
  private readonly state: SegmenterState;
  private readonly handler: SegmenterEventHandler;
  private readonly outputs: SegmenterOutputs;
  private readonly linker: ThreadLinker;

  constructor(
    topics: SegmenterTopics,
    codecs: SegmenterCodecs,
    settings: SegmenterSettings,
    private readonly restore: (partitions: number[]) => Promise<Map<string, Buffer>>,
    private readonly redact: Redactor,
    private readonly positions: InputPositions,
    /** Used in hybrid mode only: the prompts' embeddings join the keyword similarity. */
    private readonly embed?: EmbedTexts,
    /** The optional LLM half of cross-thread linking (seed 004 §2.3). */
    assessor: LlmContinuityAssessor | null = null,
  ) {
    if (settings.mode !== 'hybrid') this.embed = undefined;
    this.linker = new ThreadLinker(assessor);
    this.state = new SegmenterState();
    this.segmenter = new StreamSegmenter({
      settings,
      sweepEvery: Number.POSITIVE_INFINITY,
      findParent: (opening) =>
        chooseParentEpisode({
          keywords: opening.keywords,
          embedding: opening.embedding,
          projectId: opening.projectId,
          now: opening.at,
          episodeId: opening.excludeEpisodeId,
          candidates: this.state.chainCandidates(opening.projectId, opening.at),
        }).parentEpisodeId,
    });
    this.handler = new SegmenterEventHandler(
      this.state,
      this.segmenter,
      this.linker,
      this.redact,
      this.embed,
    );
    this.outputs = new SegmenterOutputs(this.state, this.segmenter, this.linker, topics, codecs);
  }

  get openSessions(): number {
    return this.segmenter.openSessions;
  }

  /** After a rebalance: forget partitions no longer owned; new ones restore on first batch. */
  onAssignment(partitions: readonly number[]): void {
    this.state.owned = new Set(partitions);
    for (const partition of [...this.state.restored]) {
      if (!this.state.owned.has(partition)) this.forgetPartition(partition);
    }
  }

  private forgetPartition(partition: number): void {
    this.state.restored.delete(partition);
    this.state.chainSlices.delete(partition);
    this.state.chainChanged.delete(partition);
    this.linker.forget(partition);
    for (const [sessionId, evidence] of this.state.evidence) {
      if (evidence.partition !== partition) continue;
      this.segmenter.forget(sessionId);
      this.state.evidence.delete(sessionId);
    }
    // Sessions with prompts but no evidence record cannot exist: every push records evidence.
  }

  /**
   * Restores a partition's sessions from the changelog if they are not in memory. Runs only
   * inside the processor's turn (a batch's transform or the timer), never beside a transaction.
   */
  private async ensureRestored(partition: number): Promise<void> {
    this.state.owned.add(partition);
    if (this.state.restored.has(partition)) return;
    const chain: ChainRecord[] = [];
    for (const value of (await this.restore([partition])).values()) {
      const parsed = JSON.parse(value.toString('utf8')) as
        SessionRecord | ChainRecord | ThreadsRecord;
      if (parsed.partition !== partition) continue;
      if ('kind' in parsed) {
        if (parsed.kind === 'chain') chain.push(parsed);
        else this.linker.restore(parsed);
        continue;
      }
      const record = parsed;
      if (record.session) this.segmenter.restore(record.session);
      const { prompts, toolCalls, validations, pendingEnd, crossThread, awaitingOutcome } = record;
      this.state.evidence.set(record.sessionId, {
        partition,
        prompts,
        toolCalls,
        validations,
        pendingEnd,
        crossThread: crossThread ?? {},
        awaitingOutcome: awaitingOutcome ?? null,
        pendingEpisodes: record.pendingEpisodes ?? [],
      });
    }
    if (chain.length > 0) {
      this.state.chainSlices.set(
        partition,
        RecentEpisodeIndex.fromJSON({
          projects: chain.map(({ projectId, episodes }) => ({ projectId, episodes })),
        }),
      );
    }
    this.state.restored.add(partition);
  }

  readonly promptStage: ExactlyOnceStage<Typed<'PromptSubmitted'>> = {
    transform: async (items) => {
      const embeddings = await this.handler.embeddingsOf(items);
      return this.transform(items, (item, out) =>
        this.handler.onPrompt(item, out, embeddings.get(item.event.eventId) ?? null),
      );
    },
    onCommitted: () => this.committed(),
    onAborted: () => this.aborted(),
  };

  readonly toolCallStage: ExactlyOnceStage<Typed<'ToolCallObserved'>> = {
    transform: (items) => {
      // This transaction commits these offsets: episodes waiting for them can be annotated.
      for (const item of items) {
        const next = Number(item.offset) + 1;
        if (next > (this.state.toolCallsConsumed.get(item.partition) ?? 0)) {
          this.state.toolCallsConsumed.set(item.partition, next);
        }
      }
      return this.transform(items, (item) => this.handler.onToolCall(item));
    },
    onCommitted: () => this.committed(),
    onAborted: () => this.aborted(),
  };

  readonly lifecycleStage: ExactlyOnceStage<LifecycleEvent> = {
    transform: async (items) => {
      const ends = await this.endTargets(items);
      return this.transform(items, (item) => this.handler.onLifecycle(item, ends));
    },
    onCommitted: () => this.committed(),
    onAborted: () => this.aborted(),
  };

  /**
   * The timer (SPEC §4.5): closes idle threads and over-long episodes as of the stream time (the
   * latest event time seen), so a replay gives the outputs of a live run.
   */
  async sweep(): Promise<AnyStageOutput[]> {
    for (const partition of this.state.owned) await this.ensureRestored(partition);
    await this.refreshToolCallsConsumed();
    const outputs: SegmenterOutput[] = [];
    outputs.push(...(await this.settleEnds()));
    outputs.push(...this.segmenter.sweep());
    // Link state of quiet projects and users leaves memory and the changelog, by stream time.
    const now = this.segmenter.now;
    for (const [partition, slice] of this.state.chainSlices) {
      for (const projectId of slice.pruneProjects(now)) {
        this.state.markChainChanged(partition, projectId);
      }
    }
    this.linker.prune(now);
    return this.outputs.finish(outputs, await this.toolCallEnds(outputs));
  }

  /** The group's committed tool-call offsets (another instance may have consumed them). */
  private async refreshToolCallsConsumed(): Promise<void> {
    const waiting = [...this.state.evidence.values()].filter((e) => e.pendingEpisodes?.length);
    if (waiting.length === 0) return;
    const partitions = [...new Set(waiting.map((evidence) => evidence.partition))];
    for (const [partition, offsets] of await this.positions.committedOffsets(partitions)) {
      if (offsets.toolCalls > (this.state.toolCallsConsumed.get(partition) ?? 0)) {
        this.state.toolCallsConsumed.set(partition, offsets.toolCalls);
      }
    }
  }

  /** The current end of the tool-calls partitions of the sessions whose episodes just closed. */
  private async toolCallEnds(outputs: SegmenterOutput[]): Promise<Map<number, number>> {
    const partitions = new Set<number>();
    for (const output of outputs) {
      const evidence = this.state.evidence.get(output.episode.sessionId);
      if (output.kind === 'closed' && evidence) partitions.add(evidence.partition);
    }
    const ends = new Map<number, number>();
    for (const partition of partitions) {
      ends.set(partition, (await this.positions.endOffsets(partition)).toolCalls);
    }
    return ends;
  }

  /** Ends the sessions whose SessionEnded waited until their prompts and tool calls were in. */
  private async settleEnds(): Promise<SegmenterOutput[]> {
    const waiting = [...this.state.evidence].filter(([, evidence]) => evidence.pendingEnd);
    if (waiting.length === 0) return [];
    const partitions = [...new Set(waiting.map(([, evidence]) => evidence.partition))];
    const committed = await this.positions.committedOffsets(partitions);
    const outputs: SegmenterOutput[] = [];
    for (const [sessionId, evidence] of waiting) {
      const done = committed.get(evidence.partition);
      const { until, at } = evidence.pendingEnd!;
      if (!done || done.prompts < until.prompts || done.toolCalls < until.toolCalls) continue;
      evidence.pendingEnd = null;
      this.state.toolCallsConsumed.set(
        evidence.partition,
        Math.max(this.state.toolCallsConsumed.get(evidence.partition) ?? 0, done.toolCalls),
      );
      this.state.touched.add(sessionId);
      this.state.ended.add(sessionId);
      outputs.push(...this.segmenter.end(sessionId, at));
    }
    return outputs;
  }

  private async endTargets(items: Delivered<LifecycleEvent>[]): Promise<Map<number, InputOffsets>> {
    const partitions = new Set(
      items.filter((item) => item.event.type === 'SessionEnded').map((item) => item.partition),
    );
    const targets = new Map<number, InputOffsets>();
    for (const partition of partitions) {
      targets.set(partition, await this.positions.endOffsets(partition));
    }
    return targets;
  }

  committed(): void {
    this.state.touched.clear();
    this.state.ended.clear();
    this.state.linkRecords = [];
    this.state.chainChanged = new Map();
  }

  /** The state in memory went ahead of the log: drop it; batches restore what was committed. */
  aborted(): void {
    // Sessions and link state alike: the retried batch restores them and decides again.
    for (const partition of [...this.state.restored]) this.forgetPartition(partition);
    this.linker.takeChanges();
    this.state.toolCallsConsumed.clear();
    this.segmenter.takeChanges();
    this.committed();
  }

  private async transform<E>(
    items: Delivered<E>[],
    // Synchronous but for the rare LLM-judged new thread: awaiting only then keeps the hot loop
    // free of a microtask per record.
    handle: (item: Delivered<E>, outputs: SegmenterOutput[]) => void | Promise<void>,
  ): Promise<AnyStageOutput[]> {
    // First batch of a newly owned partition, or the retry of an aborted one: restore first.
    // Every owned partition, not only the batch's: chaining and thread linking look at all.
    for (const partition of new Set([
      ...this.state.owned,
      ...items.map((item) => item.partition),
    ])) {
      await this.ensureRestored(partition);
    }
    const outputs: SegmenterOutput[] = [];
    for (const item of items) {
      const sessionId = (item.event as { sessionId: string }).sessionId;
      this.state.evidenceOf(sessionId, item.partition);
      this.state.touched.add(sessionId);
      const pending = handle(item, outputs);
      if (pending) await pending;
    }
    return this.outputs.finish(outputs, await this.toolCallEnds(outputs));
  }
}
