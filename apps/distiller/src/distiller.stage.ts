import type {
  EpisodeBoundaryEvent,
  LifecycleEvent,
  Memory,
  PromptSubmitted,
  ToolCallObserved,
  Typed,
} from '@engram/contracts';
import {
  canonicalVersions,
  distillationToMemories,
  distillationWindow,
  episodeSummary,
  promptContentProblem,
  uuidV5,
  windowOrderKey,
  type Distillation,
  type DistillationTrigger,
  type DistillationWindow,
  type MemoryOptions,
  type PromptLimits,
  CommittedChangelog,
} from '@engram/core';
import type {
  AnyStageOutput,
  Delivered,
  ExactlyOnceStage,
  RawStageOutput,
  StageOutput,
  TopicCodec,
} from '@engram/kafka';
import { Logger } from '@nestjs/common';
import {
  addPrompt,
  addToolCall,
  addValidation,
  newDistillerSession,
  noteEpisodeClosed,
  noteEpisodeOpened,
  noteSeen,
  progressOf,
  sessionDone,
  sessionEventsOf,
  takeReadyTriggers,
  inputsReached,
  waitTarget,
  type DistillerInputOffsets,
  type DistillerRetention,
  type DistillerSession,
  type DistillerSessionLimits,
  type DistillerSessionProgress,
} from '@engram/core';
import {
  decodeRecord,
  distilledKey,
  encodeRecord,
  sessionKey,
  type DistilledRecord,
  type DistillerRecord,
} from './distiller-records';
import type { EpisodeNarrative } from './episode-summary.stage';
import { distillationWork, type ReflectorWork } from './reflector/reflector-work';
import type { WindowDistiller } from './window-distiller';

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
};

export interface DistillerCodecs {
  prompts: TopicCodec<Typed<'PromptSubmitted'>>;
  toolCalls: TopicCodec<Typed<'ToolCallObserved'>>;
  lifecycle: TopicCodec<LifecycleEvent>;
  boundaries: TopicCodec<EpisodeBoundaryEvent>;
  memories: TopicCodec<Typed<'Memory'>>;
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

/** A session as one transaction works on it. */
interface WorkingSession {
  partition: number;
  session: DistillerSession;
  changed: boolean;
}

/** Everything one transaction (a batch, or a timer run) changes; dropped if it aborts. */
class Work {
  readonly sessions = new Map<string, WorkingSession>();
  /** Input partitions this batch consumes up to (exclusive), committed with it. */
  readonly consumed = new Map<number, DistillerInputOffsets>();
  readonly windows: DistillationWindow[] = [];
  readonly distilled = new Map<string, DistilledRecord>();
  readonly dropped = new Set<string>();
  readonly expiredKeys: { key: string; partition: number }[] = [];
  events = 0;
}

interface StagedWrite {
  partition: number;
  key: string;
  value: Buffer | null;
  /** What the in-memory index keeps of a session written (null: the session is gone). */
  progress?: DistillerSessionProgress | null;
  /** The trigger time of a dedupe key written. */
  at?: number;
}

const DAY_MS = 24 * 60 * 60_000;
const NOTHING: DistillerInputOffsets = { prompts: 0, toolCalls: 0, boundaries: 0 };

/**
 * The distiller as an exactly-once stage (SPEC §8, §11). Prompts, tool calls and QA verdicts are
 * kept per open session; triggers (EpisodeClosed from the segmenter's boundaries, SessionEnded
 * and CompactionPending from the lifecycle) wait until the session's prompts and tool calls are
 * consumed, then their window is distilled and its memories are written to memory.memories.v1 in
 * the transaction that commits the offsets and the changelog (the session's state and the
 * window's dedupe key). A trigger whose dedupe key is done — a redelivery, a replay — produces
 * nothing. An ended session's state leaves the changelog (tombstone); dedupe keys stay.
 *
 * Between transactions the stage keeps the committed records as bytes and each transaction
 * decodes what it touches, so an aborted transaction is simply forgotten. If the distiller fails
 * (an LLM outage) the transaction aborts before anything is sent and the processor retries the
 * batch from the same committed state; if the commit itself failed after a complete transform,
 * the touched partitions are restored from the changelog, which holds the truth.
 */
export class DistillerStage {
  private readonly logger = new Logger(DistillerStage.name);
  private readonly committedRecords: CommittedChangelog<DistillerRecord>;
  private readonly sessions = new Map<string, { partition: number } & DistillerSessionProgress>();
  private readonly dedupe = new Map<string, { partition: number; at: number }>();
  private owned = new Set<number>();
  private readonly consumed = new Map<number, DistillerInputOffsets>();
  private staged: StagedWrite[] = [];
  private stagedConsumed = new Map<number, DistillerInputOffsets>();
  private stagedEvents = 0;
  private transformDone = false;
  /** The latest event time seen: dedupe keys are kept for a span of event time. */
  private streamTime = 0;
  private readonly limits: DistillerSessionLimits;
  private readonly retention: DistillerRetention;

  readonly counters = {
    /** Input events committed (prompts, tool calls, lifecycle events, boundaries). */
    events: 0,
    prompts: 0,
    toolCalls: 0,
    triggers: 0,
    distilled: 0,
    skipped: 0,
    duplicates: 0,
    memories: 0,
    sessionsDropped: 0,
  };

  constructor(
    private readonly topics: DistillerTopics,
    private readonly codecs: DistillerCodecs,
    private readonly options: DistillerStageOptions,
  ) {
    this.limits = options.settings.limits;
    this.retention = options.settings.retention;
    this.committedRecords = new CommittedChangelog({
      restore: options.restore,
      decode: decodeRecord,
      onUnreadable: (key, error) =>
        this.logger.error(`unreadable changelog record ${key} skipped: ${String(error)}`),
    });
  }

  /** Sessions in committed state. */
  get openSessions(): number {
    return this.sessions.size;
  }

  /** Triggers read but not yet distilled (waiting for their prompts and tool calls). */
  get pendingTriggers(): number {
    let pending = 0;
    for (const entry of this.sessions.values()) pending += entry.pendingCount;
    return pending;
  }

  /** After a rebalance: forget partitions no longer owned; new ones restore on first use. */
  onAssignment(partitions: readonly number[]): void {
    this.owned = new Set(partitions);
    for (const partition of this.committedRecords.partitions) {
      if (!this.owned.has(partition)) this.forgetPartition(partition);
    }
  }

  readonly promptStage: ExactlyOnceStage<Typed<'PromptSubmitted'>> = {
    transform: (items) =>
      this.run(items, null, (work) => {
        for (const item of items) {
          this.noteConsumed(work, item, 'prompts');
          this.onPrompt(work, item);
        }
      }),
    onCommitted: () => this.committed(),
    onAborted: () => this.aborted(),
  };

  readonly toolCallStage: ExactlyOnceStage<Typed<'ToolCallObserved'>> = {
    transform: (items) =>
      this.run(items, null, (work) => {
        for (const item of items) {
          this.noteConsumed(work, item, 'toolCalls');
          this.onToolCall(work, item);
        }
      }),
    onCommitted: () => this.committed(),
    onAborted: () => this.aborted(),
  };

  readonly lifecycleStage: ExactlyOnceStage<LifecycleEvent> = {
    transform: async (items) => {
      const triggers = items.filter(
        (i) => i.event.type === 'SessionEnded' || i.event.type === 'CompactionPending',
      );
      const ends = await this.endsOf(triggers);
      return this.run(items, ends, (work) => {
        for (const item of items) this.onLifecycle(work, item, ends);
      });
    },
    onCommitted: () => this.committed(),
    onAborted: () => this.aborted(),
  };

  readonly boundaryStage: ExactlyOnceStage<EpisodeBoundaryEvent> = {
    transform: async (items) => {
      const ends = await this.endsOf(items.filter((i) => i.event.type === 'EpisodeClosed'));
      return this.run(items, ends, (work) => {
        for (const item of items) {
          this.noteConsumed(work, item, 'boundaries');
          this.onBoundary(work, item, ends);
        }
      });
    },
    onCommitted: () => this.committed(),
    onAborted: () => this.aborted(),
  };

  /**
   * The timer: distils triggers whose events were consumed meanwhile (perhaps by a predecessor),
   * drops ended and silent sessions, and forgets dedupe keys past their retention.
   */
  async sweep(): Promise<AnyStageOutput[]> {
    this.transformDone = false;
    for (const partition of this.owned) await this.ensureRestored(partition);
    const work = new Work();
    const waiting = [...this.sessions.values()].filter((entry) => entry.pendingCount > 0);
    if (waiting.length > 0) await this.refreshConsumed(waiting.map((entry) => entry.partition));
    for (const [sessionId, entry] of this.sessions) {
      if (!this.owned.has(entry.partition)) continue;
      if (entry.pendingCount === 0 && !this.isDone(entry)) continue;
      const working = this.loadSession(work, sessionId, entry.partition);
      if (working) this.settle(work, working);
    }
    const horizon = this.streamTime - (this.options.dedupeRetentionMs ?? 30 * DAY_MS);
    for (const [dedupeKey, entry] of this.dedupe) {
      if (entry.at < horizon && this.owned.has(entry.partition)) {
        work.expiredKeys.push({ key: distilledKey(dedupeKey), partition: entry.partition });
      }
    }
    return this.finish(work);
  }

  committed(): void {
    for (const write of this.staged) {
      this.committedRecords.apply(write.partition, write.key, write.value);
      this.index(write);
    }
    for (const [partition, offsets] of this.stagedConsumed) {
      const known = this.consumed.get(partition) ?? NOTHING;
      this.consumed.set(partition, maxOffsets(known, offsets));
    }
    this.counters.events += this.stagedEvents;
    this.resetTransaction();
  }

  /**
   * The transaction was rolled back. If the transform failed (the LLM is down), nothing reached
   * the log and the committed state in memory is still the truth; if it had completed, the
   * commit itself failed and may have happened: restore the partitions from the changelog.
   */
  aborted(): void {
    if (this.transformDone) {
      for (const partition of new Set(this.staged.map((write) => write.partition))) {
        this.forgetPartition(partition);
      }
    }
    this.resetTransaction();
  }

  private resetTransaction(): void {
    this.staged = [];
    this.stagedConsumed = new Map();
    this.stagedEvents = 0;
    this.transformDone = false;
  }

  private async run<E>(
    items: Delivered<E>[],
    ends: Map<number, DistillerInputOffsets> | null,
    handle: (work: Work) => void,
  ): Promise<AnyStageOutput[]> {
    this.transformDone = false;
    const partitions = new Set(items.map((item) => item.partition));
    for (const partition of partitions) await this.ensureRestored(partition);
    // A trigger whose events are not consumed yet in memory may have been by a predecessor.
    const behind = [...(ends ?? [])].filter(([p, end]) => !this.reached(p, end));
    if (behind.length > 0) await this.refreshConsumed(behind.map(([p]) => p));
    const work = new Work();
    work.events = items.length;
    handle(work);
    for (const partition of partitions) this.drainPartition(work, partition);
    return this.finish(work);
  }

  private noteConsumed<E>(
    work: Work,
    item: Delivered<E>,
    input: keyof DistillerInputOffsets,
  ): void {
    const offsets = { ...(work.consumed.get(item.partition) ?? this.consumedOf(item.partition)) };
    offsets[input] = Math.max(offsets[input], Number(item.offset) + 1);
    work.consumed.set(item.partition, offsets);
  }

  private onPrompt(work: Work, item: Delivered<Typed<'PromptSubmitted'>>): void {
    const prompt: PromptSubmitted = item.event;
    this.counters.prompts += 1;
    // The segmenter dead-letters this prompt (oversize text, impossible promptId): nothing may be
    // distilled from what an upstream stage rejected (the same rule, promptContentProblem).
    if (promptContentProblem(prompt, this.options.settings.prompts) !== null) return;
    const working = this.sessionOf(work, prompt, item.partition);
    const added = addPrompt(
      working.session,
      { ...prompt, text: this.options.redact(prompt.text) },
      this.limits,
    );
    if (added) this.touch(working, prompt.timestamp);
  }

  private onToolCall(work: Work, item: Delivered<Typed<'ToolCallObserved'>>): void {
    const call: ToolCallObserved = item.event;
    const working = this.sessionOf(work, call, item.partition);
    const redact = (text: string | null) => (text === null ? null : this.options.redact(text));
    const added = addToolCall(
      working.session,
      { ...call, command: redact(call.command), errorMessage: redact(call.errorMessage) },
      this.limits,
    );
    if (added) this.touch(working, call.timestamp);
    this.counters.toolCalls += 1;
  }

  private onLifecycle(
    work: Work,
    item: Delivered<LifecycleEvent>,
    ends: Map<number, DistillerInputOffsets>,
  ): void {
    const event = item.event;
    switch (event.type) {
      case 'ValidationPassed':
      case 'ValidationFailed':
      case 'SubtaskValidated': {
        const passed =
          event.type === 'ValidationPassed' ||
          (event.type === 'SubtaskValidated' && event.succeeded);
        const working = this.sessionOf(work, event, item.partition);
        const validation = { eventId: event.eventId, passed, timestamp: event.timestamp };
        if (addValidation(working.session, validation, this.limits)) {
          this.touch(working, event.timestamp);
        }
        return;
      }
      case 'SessionEnded':
        return this.enqueue(work, item, { kind: 'SessionEnded', event }, ends);
      case 'CompactionPending':
        return this.enqueue(work, item, { kind: 'CompactionPending', event }, ends);
      case 'SessionStarted':
      case 'CommitMade':
      case 'FileManifest':
      case 'RememberRequested':
      case 'TaskClassified':
        // Not what a distillation reads (remember_this is the agent's own memory).
        return;
    }
  }

  private onBoundary(
    work: Work,
    item: Delivered<EpisodeBoundaryEvent>,
    ends: Map<number, DistillerInputOffsets>,
  ): void {
    const event = item.event;
    const working = this.sessionOf(work, event, item.partition);
    if (event.type === 'EpisodeOpened') {
      noteEpisodeOpened(working.session, event);
      this.touch(working, event.timestamp);
      return;
    }
    noteEpisodeClosed(working.session, event);
    this.enqueue(work, item, { kind: 'EpisodeClosed', event }, ends);
  }

  private enqueue(
    work: Work,
    item: Delivered<unknown>,
    trigger: DistillationTrigger,
    ends: Map<number, DistillerInputOffsets>,
  ): void {
    this.counters.triggers += 1;
    const working = this.sessionOf(work, trigger.event, item.partition);
    const until = waitTarget(trigger, ends.get(item.partition) ?? NOTHING);
    working.session.pending.push({ trigger, until });
    this.touch(working, trigger.event.timestamp);
  }

  /** Distils, in order, the waiting triggers of the partition's sessions whose time has come. */
  private drainPartition(work: Work, partition: number): void {
    const sessionIds = new Set<string>();
    for (const [sessionId, entry] of this.sessions) {
      if (entry.partition === partition && entry.pendingCount > 0) sessionIds.add(sessionId);
    }
    for (const [sessionId, working] of work.sessions) {
      if (working.partition === partition) sessionIds.add(sessionId);
    }
    for (const sessionId of sessionIds) {
      const working = this.loadSession(work, sessionId, partition);
      if (working) this.settle(work, working);
    }
  }

  /** Distils the session's ready triggers, then drops the session if it is done. */
  private settle(work: Work, working: WorkingSession): void {
    const consumed = work.consumed.get(working.partition) ?? this.consumedOf(working.partition);
    const now = this.now();
    for (const trigger of takeReadyTriggers(working.session, consumed, now)) {
      working.changed = true;
      this.decide(work, working, trigger);
    }
    if (this.isDone(progressOf(working.session), now)) {
      work.dropped.add(working.session.sessionId);
      working.changed = true;
    }
  }

  private decide(work: Work, working: WorkingSession, trigger: DistillationTrigger): void {
    const decision = distillationWindow(trigger, sessionEventsOf(working.session));
    if (decision.kind === 'skip') {
      this.counters.skipped += 1;
      this.logger.debug(
        `${trigger.kind} of ${trigger.event.sessionId} skipped: ${decision.reason}`,
      );
      return;
    }
    const { window } = decision;
    if (this.dedupe.has(window.dedupeKey) || work.distilled.has(window.dedupeKey)) {
      this.counters.duplicates += 1;
      return;
    }
    work.windows.push(window);
    work.distilled.set(window.dedupeKey, {
      kind: 'distilled',
      partition: working.partition,
      sessionId: window.sessionId,
      trigger: window.trigger,
      triggerEventId: window.triggerEventId,
      at: window.triggerAt,
      memories: 0,
    });
  }

  /**
   * The transaction's outputs: the windows distilled into memories (an LLM outage throws here,
   * before anything is sent), then the changed sessions (or tombstones) and the dedupe keys.
   */
  private async finish(work: Work): Promise<AnyStageOutput[]> {
    const memories: Typed<'Memory'>[] = [];
    const narratives: EpisodeNarrative[] = [];
    const reflectorWork: ReflectorWork[] = [];
    for (const window of work.windows) {
      const distillation = await this.options.distiller.distill(window);
      // To the project's reflector, in the transaction that distilled it (SPEC §8).
      reflectorWork.push(distillationWork(distillation));
      const produced = distillationToMemories(distillation, this.options.memory);
      work.distilled.get(window.dedupeKey)!.memories = produced.length;
      const session = work.sessions.get(window.sessionId)?.session;
      const written = session
        ? canonicalVersions((session.memoryVersions ??= {}), windowOrderKey(window), produced)
        : produced;
      memories.push(...written.map((memory: Memory) => ({ type: 'Memory' as const, ...memory })));
      const narrative = narrativeOf(distillation);
      if (narrative) narratives.push(narrative);
    }
    const staged = this.stagedWrites(work);
    this.staged = staged;
    this.stagedConsumed = work.consumed;
    this.stagedEvents = work.events;
    this.transformDone = true;
    this.counters.distilled += work.windows.length;
    this.counters.memories += memories.length;
    const changelog: RawStageOutput = {
      topic: this.topics.changelog,
      messages: staged.map(({ key, partition, value }) => ({ key, partition, value })),
    };
    return [
      { codec: this.codecs.memories, events: memories } satisfies StageOutput,
      { codec: this.codecs.narratives, events: narratives } satisfies StageOutput,
      { codec: this.codecs.reflector, events: reflectorWork } satisfies StageOutput,
      changelog,
    ];
  }

  private stagedWrites(work: Work): StagedWrite[] {
    const staged: StagedWrite[] = [];
    for (const working of work.sessions.values()) {
      if (!working.changed) continue;
      const gone = work.dropped.has(working.session.sessionId);
      if (gone) this.counters.sessionsDropped += 1;
      staged.push({
        partition: working.partition,
        key: sessionKey(working.session.sessionId),
        value: gone
          ? null
          : encodeRecord({
              kind: 'session',
              partition: working.partition,
              session: working.session,
            }),
        progress: gone ? null : progressOf(working.session),
      });
    }
    for (const [dedupeKey, record] of work.distilled) {
      staged.push({
        partition: record.partition,
        key: distilledKey(dedupeKey),
        value: encodeRecord(record),
        at: record.at,
      });
    }
    for (const { key, partition } of work.expiredKeys) staged.push({ partition, key, value: null });
    return staged;
  }

  /** Keeps the in-memory indexes in step with a committed (or restored) changelog write. */
  private index(write: StagedWrite): void {
    const { key, partition } = write;
    if (key.startsWith('session:')) {
      const sessionId = key.slice('session:'.length);
      if (!write.progress) this.sessions.delete(sessionId);
      else this.sessions.set(sessionId, { partition, ...write.progress });
    } else if (key.startsWith('distilled:')) {
      const dedupeKey = key.slice('distilled:'.length);
      if (write.at === undefined) this.dedupe.delete(dedupeKey);
      else this.dedupe.set(dedupeKey, { partition, at: write.at });
    }
  }

  private isDone(progress: DistillerSessionProgress, now = this.now()): boolean {
    return sessionDone(progress, now, this.retention);
  }

  private now(): number {
    return (this.options.clock ?? Date.now)();
  }

  private touch(working: WorkingSession, at: number): void {
    working.changed = true;
    noteSeen(working.session, this.now());
    this.streamTime = Math.max(this.streamTime, at);
  }

  /** The session's working copy: from this transaction, the committed bytes, or new. */
  private sessionOf(
    work: Work,
    event: { tenantId: string; projectId: string; sessionId: string },
    partition: number,
  ): WorkingSession {
    const existing = this.loadSession(work, event.sessionId, partition);
    if (existing) return existing;
    const working = { partition, session: newDistillerSession(event), changed: true };
    work.sessions.set(event.sessionId, working);
    return working;
  }

  private loadSession(work: Work, sessionId: string, partition: number): WorkingSession | null {
    const working = work.sessions.get(sessionId);
    if (working) return working;
    const bytes = this.committedRecords.get(partition, sessionKey(sessionId));
    if (!bytes) return null;
    const record = decodeRecord(bytes);
    if (record.kind !== 'session') return null;
    const loaded = { partition, session: record.session, changed: false };
    work.sessions.set(sessionId, loaded);
    return loaded;
  }

  /** End offsets of the prompts and tool-calls partitions of these triggers, read now. */
  private async endsOf<E>(triggers: Delivered<E>[]): Promise<Map<number, DistillerInputOffsets>> {
    const ends = new Map<number, DistillerInputOffsets>();
    for (const partition of new Set(triggers.map((item) => item.partition))) {
      ends.set(partition, await this.options.positions.endOffsets(partition));
    }
    return ends;
  }

  private consumedOf(partition: number): DistillerInputOffsets {
    return this.consumed.get(partition) ?? NOTHING;
  }

  private reached(partition: number, until: DistillerInputOffsets): boolean {
    return inputsReached(until, this.consumedOf(partition));
  }

  /** The group's committed input offsets (a predecessor may have consumed them). */
  private async refreshConsumed(partitions: number[]): Promise<void> {
    const committed = await this.options.positions.committedOffsets([...new Set(partitions)]);
    for (const [partition, offsets] of committed) {
      this.consumed.set(partition, maxOffsets(this.consumedOf(partition), offsets));
    }
  }

  /** Restores a partition's records from the changelog unless they are in memory. */
  private async ensureRestored(partition: number): Promise<void> {
    this.owned.add(partition);
    await this.committedRecords.ensure(partition, (key, record) => {
      const value = this.committedRecords.get(partition, key)!;
      if (record.kind === 'session') {
        this.index({ key, partition, value, progress: progressOf(record.session) });
        this.streamTime = Math.max(this.streamTime, record.session.lastActivityAt);
      } else {
        this.index({ key, partition, value, at: record.at });
      }
    });
  }

  private forgetPartition(partition: number): void {
    this.committedRecords.forget(partition);
    this.consumed.delete(partition);
    for (const [sessionId, entry] of [...this.sessions]) {
      if (entry.partition === partition) this.sessions.delete(sessionId);
    }
    for (const [key, entry] of [...this.dedupe]) {
      if (entry.partition === partition) this.dedupe.delete(key);
    }
  }
}

function maxOffsets(a: DistillerInputOffsets, b: DistillerInputOffsets): DistillerInputOffsets {
  return {
    prompts: Math.max(a.prompts, b.prompts),
    toolCalls: Math.max(a.toolCalls, b.toolCalls),
    boundaries: Math.max(a.boundaries, b.boundaries),
  };
}

/** An episode close's narrative, for the episode's `summary` (the other triggers span episodes). */
function narrativeOf(distillation: Distillation): EpisodeNarrative | null {
  const { episodeId } = distillation;
  if (distillation.trigger !== 'EpisodeClosed' || episodeId === null) return null;
  // An LLM may split one episode into several segments: their narratives together, then.
  const summary = episodeSummary(distillation, episodeId) ?? episodeSummary(distillation);
  if (summary === null) return null;
  return {
    eventId: uuidV5(`narrative:${distillation.dedupeKey}`),
    tenantId: distillation.tenantId,
    projectId: distillation.projectId,
    sessionId: distillation.sessionId,
    episodeId,
    summary,
    timestamp: distillation.lastEntryAt ?? distillation.triggerAt,
  };
}
