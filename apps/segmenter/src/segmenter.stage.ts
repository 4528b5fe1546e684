import type { LifecycleEvent, PromptSubmitted, ToolCallObserved, Typed } from '@engram/contracts';
import {
  annotateEpisode,
  type LlmContinuityAssessor,
  RecentEpisodeIndex,
  chooseParentEpisode,
  StreamSegmenter,
  type AnnotationPrompt,
  type AnnotationToolCall,
  type AnnotationValidation,
  type ChainCandidate,
  type SegmenterOutput,
  type SegmenterSettings,
  type SessionState,
} from '@engram/core';
import type {
  AnyStageOutput,
  Delivered,
  ExactlyOnceStage,
  RawStageOutput,
  StageOutput,
  TopicCodec,
} from '@engram/kafka';
import { boundaryRecord, episodeRecord } from './episode-records';
import {
  THREADS_KEY_PREFIX,
  ThreadLinker,
  type LinkEvidence,
  type ThreadsRecord,
} from './thread-linker';

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
type ClosedOutput = Extract<SegmenterOutput, { kind: 'closed' }>;

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

type Evidence = Omit<SessionRecord, 'v' | 'sessionId' | 'session'>;

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

// The evidence kept for annotation is bounded, so one session's changelog record stays far below
// the broker's 1 MB record limit whatever the agent does.
const MAX_ERROR_CHARS = 500;
const MAX_PROMPT_CHARS = 2_000;
const MAX_TOOL_CALLS = 1_000;

/**
 * The segmenter as an exactly-once stage (SPEC §4.5). Prompts move boundaries, tool calls and
 * validations are kept as evidence for the annotation at close, SessionEnded closes. Every batch
 * writes its outputs and the changed sessions' state (changelog) in the transaction that commits
 * its offsets. State of a partition is restored from the changelog before its first batch is
 * processed; an aborted transaction drops all in-memory state, so the next batch restores what
 * was committed. (Aborts are rare; copying every touched session for a rollback made each batch
 * pay for them — it cost more than the segmentation itself.)
 */
export class SegmenterStage {
  private readonly segmenter: StreamSegmenter;
  private readonly evidence = new Map<string, Evidence>();
  private readonly restored = new Set<number>();
  private owned = new Set<number>();
  /**
   * The chaining index per input partition (an episode belongs to its session's partition):
   * persisted in the changelog one record per project, restored and forgotten with the partition.
   * Candidates come from every partition this instance holds.
   */
  private readonly chainSlices = new Map<number, RecentEpisodeIndex>();
  /** Projects whose chain record changed in the open transaction, per partition. */
  private chainChanged = new Map<number, Set<string>>();
  private readonly linker: ThreadLinker;
  /** Thread-link decisions and outcomes of the open transaction. */
  private linkRecords: unknown[] = [];
  /** How far the tool-calls partitions are consumed (this transaction's batch included). */
  private toolCallsConsumed = new Map<number, number>();
  /** Sessions ended in the open transaction: their changelog entry becomes a tombstone. */
  private ended = new Set<string>();
  /** Sessions changed in the open transaction: their changelog entry is rewritten. */
  private touched = new Set<string>();

  constructor(
    private readonly topics: SegmenterTopics,
    private readonly codecs: SegmenterCodecs,
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
          candidates: this.chainCandidates(opening.projectId, opening.at),
        }).parentEpisodeId,
    });
  }

  private chainCandidates(projectId: string, at: number): readonly Readonly<ChainCandidate>[] {
    if (this.chainSlices.size === 1) {
      for (const slice of this.chainSlices.values()) return slice.candidates(projectId, at);
    }
    return [...this.chainSlices.keys()]
      .sort((a, b) => a - b)
      .flatMap((partition) => this.chainSlices.get(partition)!.candidates(projectId, at));
  }

  private chainSlice(partition: number): RecentEpisodeIndex {
    let slice = this.chainSlices.get(partition);
    if (!slice) {
      slice = new RecentEpisodeIndex();
      this.chainSlices.set(partition, slice);
    }
    return slice;
  }

  private markChainChanged(partition: number, projectId: string): void {
    let projects = this.chainChanged.get(partition);
    if (!projects) {
      projects = new Set();
      this.chainChanged.set(partition, projects);
    }
    projects.add(projectId);
  }

  get openSessions(): number {
    return this.segmenter.openSessions;
  }

  /** After a rebalance: forget partitions no longer owned; new ones restore on first batch. */
  onAssignment(partitions: readonly number[]): void {
    this.owned = new Set(partitions);
    for (const partition of [...this.restored]) {
      if (!this.owned.has(partition)) this.forgetPartition(partition);
    }
  }

  private forgetPartition(partition: number): void {
    this.restored.delete(partition);
    this.chainSlices.delete(partition);
    this.chainChanged.delete(partition);
    this.linker.forget(partition);
    for (const [sessionId, evidence] of this.evidence) {
      if (evidence.partition !== partition) continue;
      this.segmenter.forget(sessionId);
      this.evidence.delete(sessionId);
    }
    // Sessions with prompts but no evidence record cannot exist: every push records evidence.
  }

  /**
   * Restores a partition's sessions from the changelog if they are not in memory. Runs only
   * inside the processor's turn (a batch's transform or the timer), never beside a transaction.
   */
  private async ensureRestored(partition: number): Promise<void> {
    this.owned.add(partition);
    if (this.restored.has(partition)) return;
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
      this.evidence.set(record.sessionId, {
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
      this.chainSlices.set(
        partition,
        RecentEpisodeIndex.fromJSON({
          projects: chain.map(({ projectId, episodes }) => ({ projectId, episodes })),
        }),
      );
    }
    this.restored.add(partition);
  }

  readonly promptStage: ExactlyOnceStage<Typed<'PromptSubmitted'>> = {
    transform: async (items) => {
      const embeddings = await this.embeddingsOf(items);
      return this.transform(items, (item, out) =>
        this.onPrompt(item, out, embeddings.get(item.event.eventId) ?? null),
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
        if (next > (this.toolCallsConsumed.get(item.partition) ?? 0)) {
          this.toolCallsConsumed.set(item.partition, next);
        }
      }
      return this.transform(items, (item) => this.onToolCall(item));
    },
    onCommitted: () => this.committed(),
    onAborted: () => this.aborted(),
  };

  readonly lifecycleStage: ExactlyOnceStage<LifecycleEvent> = {
    transform: async (items) => {
      const ends = await this.endTargets(items);
      return this.transform(items, (item) => this.onLifecycle(item, ends));
    },
    onCommitted: () => this.committed(),
    onAborted: () => this.aborted(),
  };

  /**
   * The timer (SPEC §4.5): closes idle threads and over-long episodes as of the stream time (the
   * latest event time seen), so a replay gives the outputs of a live run.
   */
  async sweep(): Promise<AnyStageOutput[]> {
    for (const partition of this.owned) await this.ensureRestored(partition);
    await this.refreshToolCallsConsumed();
    const outputs: SegmenterOutput[] = [];
    outputs.push(...(await this.settleEnds()));
    outputs.push(...this.segmenter.sweep());
    // Link state of quiet projects and users leaves memory and the changelog, by stream time.
    const now = this.segmenter.now;
    for (const [partition, slice] of this.chainSlices) {
      for (const projectId of slice.pruneProjects(now)) this.markChainChanged(partition, projectId);
    }
    this.linker.prune(now);
    return this.finish(outputs, await this.toolCallEnds(outputs));
  }

  /** The group's committed tool-call offsets (another instance may have consumed them). */
  private async refreshToolCallsConsumed(): Promise<void> {
    const waiting = [...this.evidence.values()].filter((e) => e.pendingEpisodes?.length);
    if (waiting.length === 0) return;
    const partitions = [...new Set(waiting.map((evidence) => evidence.partition))];
    for (const [partition, offsets] of await this.positions.committedOffsets(partitions)) {
      if (offsets.toolCalls > (this.toolCallsConsumed.get(partition) ?? 0)) {
        this.toolCallsConsumed.set(partition, offsets.toolCalls);
      }
    }
  }

  /** The current end of the tool-calls partitions of the sessions whose episodes just closed. */
  private async toolCallEnds(outputs: SegmenterOutput[]): Promise<Map<number, number>> {
    const partitions = new Set<number>();
    for (const output of outputs) {
      const evidence = this.evidence.get(output.episode.sessionId);
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
    const waiting = [...this.evidence].filter(([, evidence]) => evidence.pendingEnd);
    if (waiting.length === 0) return [];
    const partitions = [...new Set(waiting.map(([, evidence]) => evidence.partition))];
    const committed = await this.positions.committedOffsets(partitions);
    const outputs: SegmenterOutput[] = [];
    for (const [sessionId, evidence] of waiting) {
      const done = committed.get(evidence.partition);
      const { until, at } = evidence.pendingEnd!;
      if (!done || done.prompts < until.prompts || done.toolCalls < until.toolCalls) continue;
      evidence.pendingEnd = null;
      this.toolCallsConsumed.set(
        evidence.partition,
        Math.max(this.toolCallsConsumed.get(evidence.partition) ?? 0, done.toolCalls),
      );
      this.touched.add(sessionId);
      this.ended.add(sessionId);
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
    this.touched.clear();
    this.ended.clear();
    this.linkRecords = [];
    this.chainChanged = new Map();
  }

  /** The state in memory went ahead of the log: drop it; batches restore what was committed. */
  aborted(): void {
    // Sessions and link state alike: the retried batch restores them and decides again.
    for (const partition of [...this.restored]) this.forgetPartition(partition);
    this.linker.takeChanges();
    this.toolCallsConsumed.clear();
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
    for (const partition of new Set([...this.owned, ...items.map((item) => item.partition)])) {
      await this.ensureRestored(partition);
    }
    const outputs: SegmenterOutput[] = [];
    for (const item of items) {
      const sessionId = (item.event as { sessionId: string }).sessionId;
      this.evidenceOf(sessionId, item.partition);
      this.touched.add(sessionId);
      const pending = handle(item, outputs);
      if (pending) await pending;
    }
    return this.finish(outputs, await this.toolCallEnds(outputs));
  }

  /** Hybrid mode: one batched embedding call for the batch's user prompts (redacted). */
  private async embeddingsOf(
    items: Delivered<Typed<'PromptSubmitted'>>[],
  ): Promise<Map<string, number[]>> {
    const embeddings = new Map<string, number[]>();
    if (!this.embed) return embeddings;
    const prompts = items.map((item) => item.event).filter((p) => p.source === 'user');
    const vectors = await this.embed(prompts.map((p) => this.redact(p.text)));
    prompts.forEach((p, i) => embeddings.set(p.eventId, vectors[i]));
    return embeddings;
  }

  private onPrompt(
    item: Delivered<Typed<'PromptSubmitted'>>,
    outputs: SegmenterOutput[],
    embedding: number[] | null = null,
  ): void | Promise<void> {
    const prompt: PromptSubmitted = { ...item.event, text: this.redact(item.event.text) };
    const result = this.segmenter.push(prompt, embedding);
    if (result.decision.rule === 'duplicate') return;
    this.evidenceOf(prompt.sessionId, item.partition).prompts.push({
      eventId: prompt.eventId,
      promptId: prompt.promptId,
      source: prompt.source,
      text: prompt.text.slice(0, MAX_PROMPT_CHARS),
      timestamp: prompt.timestamp,
      agentId: prompt.agentId,
      userId: prompt.userId,
      methodology: prompt.methodology,
      methodologyPhase: prompt.methodologyPhase,
    });
    outputs.push(...result.outputs);
    if (prompt.source === 'user') return this.noteThreadActivity(prompt, result.outputs);
  }

  /** A user turn: cross-thread linking decisions and outcomes (seed 004 §2.3–2.4). */
  private noteThreadActivity(
    prompt: PromptSubmitted,
    outputs: SegmenterOutput[],
  ): void | Promise<void> {
    const state = this.segmenter.state(prompt.sessionId);
    const evidence = this.evidence.get(prompt.sessionId);
    if (!state?.thread || !state.episode || !evidence) return;
    const threadId = state.thread.threadId;
    const opened = outputs.find((o) => o.kind === 'opened' && o.episode.threadId === threadId);
    const records = this.linker.onUserTurn(
      prompt,
      threadId,
      state.episode.episodeId,
      opened?.episode ?? null,
      evidence,
      evidence.partition,
    );
    if (!(records instanceof Promise)) {
      this.linkRecords.push(...records);
      return;
    }
    return records.then((decided) => {
      this.linkRecords.push(...decided);
    });
  }

  private onToolCall(item: Delivered<Typed<'ToolCallObserved'>>): void {
    const call: ToolCallObserved = item.event;
    const evidence = this.evidenceOf(call.sessionId, item.partition);
    if (evidence.toolCalls.some((known) => known.eventId === call.eventId)) return;
    evidence.toolCalls.push({
      eventId: call.eventId,
      promptId: call.promptId,
      stepIndex: call.stepIndex,
      toolName: call.toolName,
      filePaths: call.filePaths,
      command: call.command === null ? null : this.redact(call.command),
      outcome: call.outcome,
      errorMessage:
        call.errorMessage === null
          ? null
          : this.redact(call.errorMessage).slice(0, MAX_ERROR_CHARS),
      timestamp: call.timestamp,
      agentId: call.agentId,
      userId: call.userId,
      mcp: call.mcp,
    });
    if (evidence.toolCalls.length > MAX_TOOL_CALLS) evidence.toolCalls.shift();
  }

  private onLifecycle(item: Delivered<LifecycleEvent>, ends: Map<number, InputOffsets>): void {
    const event = item.event;
    if (event.type === 'SessionEnded') {
      const evidence = this.evidenceOf(event.sessionId, item.partition);
      evidence.pendingEnd = { at: event.timestamp, until: ends.get(item.partition)! };
    } else if (event.type === 'ValidationPassed' || event.type === 'ValidationFailed') {
      this.evidenceOf(event.sessionId, item.partition).validations.push({
        passed: event.type === 'ValidationPassed',
        timestamp: event.timestamp,
      });
    }
  }

  private evidenceOf(sessionId: string, partition: number) {
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

  private recordOf(sessionId: string): SessionRecord | undefined {
    const evidence = this.evidence.get(sessionId);
    if (!evidence) return undefined;
    const session = this.segmenter.state(sessionId) ?? null;
    return { v: 1, sessionId, session, ...evidence };
  }

  /**
   * Outputs → records: boundaries at once; closed episodes indexed for chaining and queued for
   * annotation (`toolCallEnds`: how far their tool calls reach); queued episodes whose tool calls
   * are all consumed → annotated episodes; state → changelog.
   */
  private finish(
    outputs: SegmenterOutput[],
    toolCallEnds = new Map<number, number>(),
  ): AnyStageOutput[] {
    const boundaries: unknown[] = [];
    for (const output of outputs) {
      boundaries.push(boundaryRecord(output));
      if (output.kind !== 'closed') continue;
      const { episode } = output;
      const evidence = this.evidence.get(episode.sessionId);
      if (!evidence) continue;
      this.chainSlice(evidence.partition).add(
        {
          episodeId: episode.episodeId,
          projectId: episode.projectId,
          closedAt: output.at,
          keywords: episode.intentKeywords,
          parentEpisodeId: episode.parentEpisodeId,
        },
        output.at,
      );
      this.markChainChanged(evidence.partition, episode.projectId);
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
      { codec: this.codecs.threadLinks, events: this.linkRecords } satisfies StageOutput,
      this.changelogOutput(),
    ];
  }

  /** Annotates and releases the queued episodes whose tool calls have all been consumed. */
  private releaseEpisodes(): unknown[] {
    const episodes: unknown[] = [];
    for (const [sessionId, evidence] of this.evidence) {
      const queue = evidence.pendingEpisodes;
      if (!queue?.length) continue;
      const consumed = this.toolCallsConsumed.get(evidence.partition) ?? 0;
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
        this.touched.add(sessionId);
      }
      // A session that ended (or was dropped) while episodes waited leaves the changelog now.
      if (queue.length === 0 && !this.segmenter.state(sessionId) && !evidence.pendingEnd) {
        this.ended.add(sessionId);
      }
    }
    return episodes;
  }

  /** The touched sessions' records (or tombstones for sessions that ended), to their partition. */
  private changelogOutput(): RawStageOutput {
    // The timer's closes and drops are changes too; a dropped session (idle for good, nothing
    // pending) leaves the changelog.
    for (const [sessionId, state] of this.segmenter.takeChanges()) {
      this.touched.add(sessionId);
      if (state === null && !this.evidence.get(sessionId)?.pendingEnd) this.ended.add(sessionId);
    }
    const messages = [...this.touched].flatMap((sessionId) => {
      const record = this.recordOf(sessionId);
      if (!record) return [];
      // An ended session leaves the changelog once its last episodes are annotated.
      const gone = this.ended.has(sessionId) && !record.pendingEpisodes?.length;
      if (gone) this.evidence.delete(sessionId);
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
    for (const partition of [...this.chainChanged.keys()].sort((a, b) => a - b)) {
      const slice = this.chainSlices.get(partition);
      for (const projectId of [...this.chainChanged.get(partition)!].sort()) {
        const episodes = slice?.episodesOf(projectId) ?? [];
        const record: ChainRecord = { v: 1, kind: 'chain', partition, projectId, episodes };
        messages.push({
          key: CHAIN_KEY_PREFIX + projectId,
          partition,
          value: episodes.length === 0 ? null : Buffer.from(JSON.stringify(record)),
        });
      }
    }
    this.chainChanged = new Map();
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
