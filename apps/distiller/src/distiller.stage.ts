import type { EpisodeBoundaryEvent, LifecycleEvent, Memory, Typed } from '@engram/contracts';
import {
  canonicalVersions,
  distillationToMemories,
  episodeSummary,
  progressOf,
  uuidV5,
  windowOrderKey,
  type Distillation,
  type DistillerInputOffsets,
} from '@engram/core';
import type {
  AnyStageOutput,
  Delivered,
  ExactlyOnceStage,
  RawStageOutput,
  StageOutput,
} from '@engram/core';
import { Logger } from '@nestjs/common';
import { DistillerCommittedState } from './distiller-committed-state';
import { DistillerEventHandler } from './distiller-event-handler';
import { distilledKey, encodeRecord, sessionKey } from './distiller-records';
import type {
  DistillerCodecs,
  DistillerStageOptions,
  DistillerTopics,
} from './distiller-stage-options';
import {
  maxOffsets,
  NOTHING,
  Work,
  type DistillerCounters,
  type StagedWrite,
} from './distiller-work';
import type { EpisodeNarrative } from './episode-summary.stage';
import { distillationWork, type ReflectorWork } from './reflector/reflector-work';

export {
  DEFAULT_DISTILLER_TOPICS,
  type DistillerCodecs,
  type DistillerSettings,
  type DistillerStageOptions,
  type DistillerTopics,
  type InputPositions,
} from './distiller-stage-options';

const DAY_MS = 24 * 60 * 60_000;

/**
 * The distiller as an exactly-once stage (SPEC §8, §11). Prompts, tool calls and QA verdicts are
 * kept per open session; triggers (EpisodeClosed from the segmenter's boundaries, SessionEnded
 * and CompactionPending from the lifecycle) wait until the session's prompts and tool calls are
 * consumed, then their window is distilled and its memories are written — its facts to the
 * memory candidates (joined per memory id by MemoryMergeStage), its work_state to
 * memory.memories.v1 — in the transaction that commits the offsets and the changelog (the
 * session's state and the window's dedupe key). A trigger whose dedupe key is done — a redelivery, a replay — produces
 * nothing. An ended session's state leaves the changelog (tombstone); dedupe keys stay.
 *
 * Between transactions the stage keeps the committed records as bytes and each transaction
 * decodes what it touches, so an aborted transaction is simply forgotten. If the distiller fails
 * (an LLM outage) the transaction aborts before anything is sent and the processor retries the
 * batch from the same committed state; if the commit itself failed after a complete transform,
 * the touched partitions are restored from the changelog, which holds the truth.
 *
 * The committed state is in DistillerCommittedState (distiller-committed-state.ts), what each
 * event does to its session in DistillerEventHandler (distiller-event-handler.ts).
 */
export class DistillerStage {
  private readonly logger = new Logger(DistillerStage.name);
  private readonly state: DistillerCommittedState;
  private readonly handler: DistillerEventHandler;
  private staged: StagedWrite[] = [];
  private stagedConsumed = new Map<number, DistillerInputOffsets>();
  private stagedEvents = 0;
  private transformDone = false;

  readonly counters: DistillerCounters = {
    /** Input events committed (prompts, tool calls, lifecycle events, boundaries). */
    events: 0,
    prompts: 0,
    toolCalls: 0,
    triggers: 0,
    distilled: 0,
    skipped: 0,
    duplicates: 0,
    memories: 0,
    candidates: 0,
    sessionsDropped: 0,
  };

  constructor(
    private readonly topics: DistillerTopics,
    private readonly codecs: DistillerCodecs,
    private readonly options: DistillerStageOptions,
  ) {
    this.state = new DistillerCommittedState(options.restore, options.positions, this.logger);
    this.handler = new DistillerEventHandler(this.state, this.counters, options, this.logger);
  }

  /** Sessions in committed state. */
  get openSessions(): number {
    return this.state.sessions.size;
  }

  /** Triggers read but not yet distilled (waiting for their prompts and tool calls). */
  get pendingTriggers(): number {
    let pending = 0;
    for (const entry of this.state.sessions.values()) pending += entry.pendingCount;
    return pending;
  }

  /** After a rebalance: forget partitions no longer owned; new ones restore on first use. */
  onAssignment(partitions: readonly number[]): void {
    this.state.onAssignment(partitions);
  }

  readonly promptStage: ExactlyOnceStage<Typed<'PromptSubmitted'>> = {
    transform: (items) =>
      this.run(items, null, (work) => {
        for (const item of items) {
          this.noteConsumed(work, item, 'prompts');
          this.handler.onPrompt(work, item);
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
          this.handler.onToolCall(work, item);
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
      const ends = await this.state.endsOf(triggers);
      return this.run(items, ends, (work) => {
        for (const item of items) this.handler.onLifecycle(work, item, ends);
      });
    },
    onCommitted: () => this.committed(),
    onAborted: () => this.aborted(),
  };

  readonly boundaryStage: ExactlyOnceStage<EpisodeBoundaryEvent> = {
    transform: async (items) => {
      const ends = await this.state.endsOf(items.filter((i) => i.event.type === 'EpisodeClosed'));
      return this.run(items, ends, (work) => {
        for (const item of items) {
          this.noteConsumed(work, item, 'boundaries');
          this.handler.onBoundary(work, item, ends);
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
    for (const partition of this.state.owned) await this.state.ensureRestored(partition);
    const work = new Work();
    const waiting = [...this.state.sessions.values()].filter((entry) => entry.pendingCount > 0);
    if (waiting.length > 0) {
      await this.state.refreshConsumed(waiting.map((entry) => entry.partition));
    }
    for (const [sessionId, entry] of this.state.sessions) {
      if (!this.state.owned.has(entry.partition)) continue;
      if (entry.pendingCount === 0 && !this.handler.isDone(entry)) continue;
      const working = this.handler.loadSession(work, sessionId, entry.partition);
      if (working) this.handler.settle(work, working);
    }
    const horizon = this.state.streamTime - (this.options.dedupeRetentionMs ?? 30 * DAY_MS);
    for (const [dedupeKey, entry] of this.state.dedupe) {
      if (entry.at < horizon && this.state.owned.has(entry.partition)) {
        work.expiredKeys.push({ key: distilledKey(dedupeKey), partition: entry.partition });
      }
    }
    return this.finish(work);
  }

  committed(): void {
    for (const write of this.staged) {
      this.state.committedRecords.apply(write.partition, write.key, write.value);
      this.state.index(write);
    }
    for (const [partition, offsets] of this.stagedConsumed) {
      const known = this.state.consumed.get(partition) ?? NOTHING;
      this.state.consumed.set(partition, maxOffsets(known, offsets));
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
        this.state.forgetPartition(partition);
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
    for (const partition of partitions) await this.state.ensureRestored(partition);
    // A trigger whose events are not consumed yet in memory may have been by a predecessor.
    const behind = [...(ends ?? [])].filter(([p, end]) => !this.state.reached(p, end));
    if (behind.length > 0) await this.state.refreshConsumed(behind.map(([p]) => p));
    const work = new Work();
    work.events = items.length;
    handle(work);
    for (const partition of partitions) this.handler.drainPartition(work, partition);
    return this.finish(work);
  }

  private noteConsumed<E>(
    work: Work,
    item: Delivered<E>,
    input: keyof DistillerInputOffsets,
  ): void {
    const offsets = {
      ...(work.consumed.get(item.partition) ?? this.state.consumedOf(item.partition)),
    };
    offsets[input] = Math.max(offsets[input], Number(item.offset) + 1);
    work.consumed.set(item.partition, offsets);
  }

  /**
   * The transaction's outputs: the windows distilled into memories (an LLM outage throws here,
   * before anything is sent), then the changed sessions (or tombstones) and the dedupe keys.
   */
  private async finish(work: Work): Promise<AnyStageOutput[]> {
    const workStates: Typed<'Memory'>[] = [];
    const candidates: Typed<'Memory'>[] = [];
    const narratives: EpisodeNarrative[] = [];
    const reflectorWork: ReflectorWork[] = [];
    for (const window of work.windows) {
      const distillation = await this.options.distiller.distill(window);
      // To the project's reflector, in the transaction that distilled it (SPEC §8).
      reflectorWork.push(distillationWork(distillation));
      const produced = distillationToMemories(distillation, this.options.memory);
      work.distilled.get(window.dedupeKey)!.memories = produced.length;
      // Every version of a fact goes to the merge stage, which joins them per memory id (issue
      // #19); a session's work_state is its own, the canonically latest window's version.
      const facts = produced.filter((memory) => memory.memoryType !== 'work_state');
      candidates.push(...facts.map(typedMemory));
      const states = produced.filter((memory) => memory.memoryType === 'work_state');
      const session = work.sessions.get(window.sessionId)?.session;
      const written = session
        ? canonicalVersions((session.memoryVersions ??= {}), windowOrderKey(window), states)
        : states;
      workStates.push(...written.map(typedMemory));
      const narrative = narrativeOf(distillation);
      if (narrative) narratives.push(narrative);
    }
    const staged = this.stagedWrites(work);
    this.staged = staged;
    this.stagedConsumed = work.consumed;
    this.stagedEvents = work.events;
    this.transformDone = true;
    this.counters.distilled += work.windows.length;
    this.counters.memories += workStates.length + candidates.length;
    this.counters.candidates += candidates.length;
    const changelog: RawStageOutput = {
      topic: this.topics.changelog,
      messages: staged.map(({ key, partition, value }) => ({ key, partition, value })),
    };
    return [
      { codec: this.codecs.memories, events: workStates } satisfies StageOutput,
      { codec: this.codecs.memoryCandidates, events: candidates } satisfies StageOutput,
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
}

const typedMemory = (memory: Memory): Typed<'Memory'> => ({ type: 'Memory' as const, ...memory });

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
