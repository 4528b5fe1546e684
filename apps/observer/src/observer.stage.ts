import type { LifecycleEvent, ToolCallObserved, Typed } from '@engram/contracts';
import {
  addCommit,
  commitFileChanges,
  manifestFileChanges,
  consolidationCandidates,
  addNote,
  endedSessionExpired,
  addSignals,
  expireIdle,
  markConsolidated,
  markPromoted,
  newScratchpad,
  newSeenEvents,
  onSessionEnded,
  onSubtaskValidated,
  onValidationFailed,
  onValidationPassed,
  promotableOf,
  scratchpadIdOf,
  SeenEvents,
  SessionSignalDetector,
  setComplexity,
  type CommitFileChanges,
  type MemoriesWithFiles,
  type ObserverSettings,
  type ObserverSignal,
  type PromotionTrigger,
  type Scratchpad,
  type SeenEvent,
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
import {
  emptyGraphBatch,
  isEmptyGraphBatch,
  type ObserverGraphBatch,
  type ObserverGraphWriter,
} from '@engram/neo4j';
import { Logger } from '@nestjs/common';
import {
  decodeRecord,
  encodeRecord,
  endedSessionKey,
  scratchpadKey,
  sessionKey,
  type EndedSessionRecord,
  type ObserverRecord,
  type SessionRecord,
} from './observer-records';
import {
  emptyProjectWork,
  isEmptyProjectWork,
  projectKeyOf,
  projectWorkCodec,
  type ProjectWork,
} from './project-work';
import { addFactRows, applySignal, emptyFacts, noChanges, type FactChanges } from './session-facts';

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

/** What the stage keeps in memory of each committed session, to find work without decoding. */
interface SessionIndexEntry {
  partition: number;
  lastActivityAt: number;
  pending: number;
}

/** What the stage keeps in memory of each ended session's record, to drop it in time. */
interface EndedIndexEntry {
  partition: number;
  lastActivityAt: number;
}

/** A session as one transaction works on it. */
interface WorkingSession {
  record: SessionRecord;
  detector: SessionSignalDetector;
  /** The events applied to this run (changes `record.seen`). */
  seen: SeenEvents;
  changes: FactChanges;
  changed: boolean;
  ended: boolean;
}

/** An ended session's record as one transaction works on it. */
interface WorkingEnded {
  record: EndedSessionRecord;
  seen: SeenEvents;
  changed: boolean;
  removed: boolean;
}

interface WorkingPad {
  partition: number;
  pad: Scratchpad;
  changed: boolean;
  removed: boolean;
}

/** Everything one transaction (a batch, or a timer run) changes; dropped if it aborts. */
class Work {
  readonly sessions = new Map<string, WorkingSession>();
  readonly pads = new Map<string, WorkingPad>();
  /** Ended sessions' records loaded (null: none), by sessionId. */
  readonly ended = new Map<string, WorkingEnded | null>();
  /** Tool-calls partitions consumed up to (exclusive) by this batch. */
  readonly consumed = new Map<number, number>();
  /** For the project stage, by project key. */
  readonly projects = new Map<string, ProjectWork>();

  projectOf(scope: { tenantId: string; projectId: string }): ProjectWork {
    const key = projectKeyOf(scope);
    let work = this.projects.get(key);
    if (!work) {
      work = emptyProjectWork(scope.tenantId, scope.projectId);
      this.projects.set(key, work);
    }
    return work;
  }
}

interface StagedWrite {
  partition: number;
  key: string;
  value: Buffer | null;
  /** For `session:` keys: the index entry (null: gone); for `ended:` keys: the ended entry. */
  index: SessionIndexEntry | EndedIndexEntry | null;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The observer as an exactly-once stage (SPEC §5, §11). Tool calls run through a
 * SessionSignalDetector per session; their signals become per-session graph facts (written to
 * Neo4j, idempotently, BEFORE the transaction commits the offsets) and scratchpad entries.
 * Lifecycle events wait for the session's tool calls (another topic), then move the scratchpad
 * and end the session. Per-session state and scratchpads live in the compacted changelog, in the
 * transaction that commits the offsets; a partition's state is restored before its first batch.
 *
 * Between transactions the stage keeps the committed records as bytes, and every transaction
 * decodes what it touches: an aborted transaction is simply forgotten. If the graph write fails
 * (Neo4j down) the transaction aborts before anything is sent, the processor pauses the
 * partition and retries with backoff, and the redo starts from the same committed state. If the
 * abort came after a complete transform (the commit itself failed, its outcome unknown), the
 * touched partitions are restored from the changelog again, which holds the truth.
 */
export class ObserverStage {
  private readonly logger = new Logger(ObserverStage.name);
  private readonly committedRecords: CommittedChangelog<ObserverRecord>;
  private readonly index = new Map<string, SessionIndexEntry>();
  /** Ended sessions whose event ids are still kept (changelog key `ended:<sessionId>`). */
  private readonly endedIndex = new Map<string, EndedIndexEntry>();
  private owned = new Set<number>();
  private readonly toolCallsConsumed = new Map<number, number>();
  private staged: StagedWrite[] = [];
  private stagedConsumed = new Map<number, number>();
  private stagedProjectWorks = 0;
  private transformDone = false;
  /** The latest event time seen: idle sessions are timed by the stream, so a replay agrees. */
  /**
   * Per input partition, the latest event time consumed from each input topic: the parts of
   * the partition's watermark (see `watermark`).
   */
  private readonly consumedTimes = {
    toolCalls: new Map<number, number>(),
    lifecycle: new Map<number, number>(),
  };
  private readonly sessionIdleMs: number;
  private readonly projectWork: ReturnType<typeof projectWorkCodec>;

  readonly counters = {
    toolCalls: 0,
    duplicates: 0,
    lifecycleEvents: 0,
    signals: 0,
    rejectedPaths: 0,
    graphBatches: 0,
    sessionsEnded: 0,
    sessionsExpired: 0,
    /** Ended sessions' records dropped after `endedSessionRetentionMs`. */
    endedSessionsForgotten: 0,
    promotionTriggers: 0,
    /** ProjectWork records committed for the project stage. */
    projectWorks: 0,
    /** FileManifests swept against the project's memories, and the memory paths found absent. */
    manifestsSwept: 0,
    manifestAbsentPaths: 0,
  };

  constructor(
    private readonly topics: ObserverTopics,
    private readonly options: ObserverStageOptions,
  ) {
    this.sessionIdleMs = options.sessionIdleMs ?? DAY_MS;
    this.projectWork = projectWorkCodec(topics.projectWork);
    this.committedRecords = new CommittedChangelog({
      restore: options.restore,
      decode: decodeRecord,
      onUnreadable: (key, error) =>
        this.logger.error(`unreadable changelog record ${key} skipped: ${String(error)}`),
    });
  }

  /** Sessions in committed state. */
  get openSessions(): number {
    return this.index.size;
  }

  /** Ended sessions whose events are still recognised if they come again. */
  get endedSessionsKept(): number {
    return this.endedIndex.size;
  }

  /** Lifecycle events still waiting for their sessions' tool calls. */
  get pendingLifecycle(): number {
    let pending = 0;
    for (const entry of this.index.values()) pending += entry.pending;
    return pending;
  }

  /** After a rebalance: forget partitions no longer owned; new ones restore on first use. */
  onAssignment(partitions: readonly number[]): void {
    this.owned = new Set(partitions);
    for (const partition of this.committedRecords.partitions) {
      if (!this.owned.has(partition)) this.forgetPartition(partition);
    }
  }

  readonly toolCallStage: ExactlyOnceStage<Typed<'ToolCallObserved'>> = {
    transform: (items) => {
      this.noteConsumedTimes(this.consumedTimes.toolCalls, items);
      return this.run(items, (work) => {
        for (const item of items) {
          const next = Number(item.offset) + 1;
          if (next > (work.consumed.get(item.partition) ?? 0)) {
            work.consumed.set(item.partition, next);
          }
        }
        for (const item of items) this.onToolCall(work, item);
        for (const partition of work.consumed.keys()) this.drainPartition(work, partition);
      });
    },
    onCommitted: () => this.committed(),
    onAborted: () => this.aborted(),
  };

  readonly lifecycleStage: ExactlyOnceStage<LifecycleEvent> = {
    transform: async (items) => {
      this.noteConsumedTimes(this.consumedTimes.lifecycle, items);
      const ends = new Map<number, number>();
      for (const partition of new Set(items.map((item) => item.partition))) {
        ends.set(partition, await this.options.positions.endOffset(partition));
      }
      const behind = [...ends].filter(([p, end]) => this.consumedOf(null, p) < end);
      if (behind.length > 0) await this.refreshConsumed(behind.map(([p]) => p));
      const sweeps = await this.manifestSweeps(items);
      return this.run(items, (work) => {
        for (const item of items) {
          this.onLifecycle(work, item, ends.get(item.partition)!, sweeps.get(item) ?? null);
        }
        for (const partition of ends.keys()) this.drainPartition(work, partition);
      });
    },
    onCommitted: () => this.committed(),
    onAborted: () => this.aborted(),
  };

  /**
   * The timer: applies lifecycle events whose tool calls have been consumed meanwhile (perhaps by
   * a predecessor), and finishes sessions idle for `sessionIdleMs` by their partition's watermark.
   */
  async sweep(): Promise<AnyStageOutput[]> {
    this.transformDone = false;
    for (const partition of this.owned) await this.ensureRestored(partition);
    const work = new Work();
    const waiting = [...this.index.values()].filter((entry) => entry.pending > 0);
    if (waiting.length > 0) await this.refreshConsumed(waiting.map((entry) => entry.partition));
    for (const partition of new Set(waiting.map((entry) => entry.partition))) {
      this.drainPartition(work, partition);
    }
    for (const [sessionId, entry] of this.index) {
      if (this.watermark(entry.partition) - entry.lastActivityAt < this.sessionIdleMs) continue;
      const session = this.loadSession(work, sessionId, entry.partition);
      if (session && !session.ended) this.expire(work, session);
    }
    for (const [sessionId, entry] of this.endedIndex) {
      const watermark = this.watermark(entry.partition);
      if (!endedSessionExpired(entry.lastActivityAt, watermark, this.options.settings)) {
        continue;
      }
      const ended = this.loadEnded(work, sessionId, entry.partition);
      if (ended && !ended.removed) {
        ended.removed = true;
        this.counters.endedSessionsForgotten += 1;
      }
    }
    return this.finish(work);
  }

  committed(): void {
    for (const write of this.staged) {
      this.committedRecords.apply(write.partition, write.key, write.value);
      if (write.key.startsWith('session:')) {
        const sessionId = write.key.slice('session:'.length);
        if (write.index === null) this.index.delete(sessionId);
        else this.index.set(sessionId, write.index as SessionIndexEntry);
      } else if (write.key.startsWith('ended:')) {
        const sessionId = write.key.slice('ended:'.length);
        if (write.index === null) this.endedIndex.delete(sessionId);
        else this.endedIndex.set(sessionId, write.index);
      }
    }
    this.counters.projectWorks += this.stagedProjectWorks;
    for (const [partition, offset] of this.stagedConsumed) {
      if (offset > (this.toolCallsConsumed.get(partition) ?? 0)) {
        this.toolCallsConsumed.set(partition, offset);
      }
    }
    this.resetTransaction();
  }

  /**
   * The transaction was rolled back. If the transform failed (a graph write refused), nothing
   * reached the log and the committed state in memory is still the truth; if it had completed,
   * the commit itself failed and may have happened: restore the partitions from the changelog.
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
    this.stagedProjectWorks = 0;
    this.stagedConsumed = new Map();
    this.transformDone = false;
  }

  private async run<E>(
    items: Delivered<E>[],
    handle: (work: Work) => void,
  ): Promise<AnyStageOutput[]> {
    this.transformDone = false;
    for (const partition of new Set(items.map((item) => item.partition))) {
      await this.ensureRestored(partition);
    }
    const work = new Work();
    handle(work);
    return this.finish(work);
  }

  private onToolCall(work: Work, item: Delivered<Typed<'ToolCallObserved'>>): void {
    const call: ToolCallObserved = item.event;
    this.counters.toolCalls += 1;
    if (this.seenBefore(work, call, item.partition)) {
      this.counters.duplicates += 1;
      return;
    }
    const session = this.sessionOf(work, call, item.partition);
    const result = session.detector.observe({
      ...call,
      command: call.command === null ? null : this.options.redact(call.command),
      errorMessage: call.errorMessage === null ? null : this.options.redact(call.errorMessage),
    });
    this.counters.rejectedPaths += result.rejectedPaths.length;
    if (result.duplicate) {
      this.counters.duplicates += 1;
      return;
    }
    session.seen.add(call);
    session.changed = true;
    this.noteActivity(session, call.timestamp);
    this.applySignals(work, session, result.signals, call.timestamp);
  }

  /**
   * The sweep of each FileManifest of the batch against the project's memories (issue #20): the
   * memories' files it does not list, as deletions (core `manifestFileChanges`). Done here, before
   * the (synchronous) batch, because the lookup is asynchronous; the manifest then waits for its
   * tool calls like any lifecycle event, with its deletions instead of its file list (a manifest
   * can list 100k files: they are never kept in the changelog nor sent to the project stage).
   */
  private async manifestSweeps(
    items: Delivered<LifecycleEvent>[],
  ): Promise<Map<Delivered<LifecycleEvent>, CommitFileChanges | null>> {
    const sweeps = new Map<Delivered<LifecycleEvent>, CommitFileChanges | null>();
    const lookup = this.options.memoriesWithFiles;
    if (!lookup) return sweeps;
    for (const item of items) {
      const manifest = item.event;
      if (manifest.type !== 'FileManifest') continue;
      const memories = await lookup.memoriesWithFiles(manifest);
      const changes = manifestFileChanges(manifest, memories, this.projectRoot(manifest));
      this.counters.manifestsSwept += 1;
      this.counters.manifestAbsentPaths += changes?.deleted.length ?? 0;
      this.logger.debug(
        `FileManifest ${manifest.eventId} (${manifest.tenantId}/${manifest.projectId} at ` +
          `${manifest.headSha ?? 'no HEAD'}): ${manifest.files.length} files, ` +
          `${memories.length} memories with files, ${changes?.deleted.length ?? 0} of their paths absent`,
      );
      sweeps.set(item, changes);
    }
    return sweeps;
  }

  private onLifecycle(
    work: Work,
    item: Delivered<LifecycleEvent>,
    untilToolCalls: number,
    sweep: CommitFileChanges | null,
  ): void {
    this.counters.lifecycleEvents += 1;
    if (this.seenBefore(work, item.event, item.partition)) {
      this.counters.duplicates += 1;
      return;
    }
    const session = this.sessionOf(work, item.event, item.partition);
    session.seen.add(item.event);
    if (item.event.type === 'FileManifest') {
      // Its deletions, not its (possibly 100k) files, wait in the session's record.
      session.record.pending.push({
        event: { ...item.event, files: [] },
        untilToolCalls,
        fileChanges: sweep,
      });
    } else {
      session.record.pending.push({ event: item.event, untilToolCalls });
    }
    session.changed = true;
  }

  /**
   * Whether the event was applied before: to the session's current run, or to a run that ended
   * less than `endedSessionRetentionMs` ago (its events published again — a hook's spool
   * re-sending, a re-import — must not start the session over, SPEC §11). A resumed session's
   * new events are not: they start a new run of the same session id.
   */
  private seenBefore(
    work: Work,
    event: SeenEvent & { sessionId: string },
    partition: number,
  ): boolean {
    const live = this.loadSession(work, event.sessionId, partition);
    if (live?.seen.has(event)) return true;
    const ended = this.loadEnded(work, event.sessionId, partition);
    return ended !== null && !ended.removed && ended.seen.has(event);
  }

  /** Applies, in order, the lifecycle events of the partition's sessions whose time has come. */
  private drainPartition(work: Work, partition: number): void {
    const consumed = this.consumedOf(work, partition);
    const sessionIds = new Set<string>();
    for (const [sessionId, entry] of this.index) {
      if (entry.partition === partition && entry.pending > 0) sessionIds.add(sessionId);
    }
    for (const [sessionId, session] of work.sessions) {
      if (session.record.partition === partition && session.record.pending.length > 0) {
        sessionIds.add(sessionId);
      }
    }
    for (const sessionId of sessionIds) {
      const session = this.loadSession(work, sessionId, partition);
      if (!session) continue;
      const { pending } = session.record;
      while (pending.length > 0 && pending[0].untilToolCalls <= consumed) {
        const next = pending.shift()!;
        this.applyLifecycle(work, session, next.event, next.fileChanges ?? null);
        session.changed = true;
      }
    }
  }

  /** `sweep`: a FileManifest's deletions (see `manifestSweeps`). */
  private applyLifecycle(
    work: Work,
    session: WorkingSession,
    event: LifecycleEvent,
    sweep: CommitFileChanges | null,
  ): void {
    const { record } = session;
    this.noteActivity(session, event.timestamp);
    const pad = () => this.padOf(work, session);
    const settings = this.options.settings;
    const root = this.projectRoot(record);
    switch (event.type) {
      case 'SessionStarted':
        record.startedAt = Math.min(record.startedAt ?? event.timestamp, event.timestamp);
        return;
      case 'SessionEnded': {
        this.applySignals(work, session, session.detector.finish(), event.timestamp);
        const scratchpad = pad();
        const triggers = onSessionEnded(scratchpad.pad, event);
        this.summarise(work, session, event.timestamp, scratchpad.pad.everValidated);
        this.trigger(work, session, triggers, scratchpad, event.timestamp);
        record.endedAt = Math.max(record.endedAt ?? event.timestamp, event.timestamp);
        session.ended = true;
        this.counters.sessionsEnded += 1;
        return;
      }
      case 'ValidationPassed': {
        const scratchpad = pad();
        this.trigger(
          work,
          session,
          onValidationPassed(scratchpad.pad, event, settings),
          scratchpad,
          event.timestamp,
        );
        return;
      }
      case 'ValidationFailed': {
        const scratchpad = pad();
        this.trigger(
          work,
          session,
          onValidationFailed(scratchpad.pad, event),
          scratchpad,
          event.timestamp,
        );
        return;
      }
      case 'SubtaskValidated': {
        const scratchpad = pad();
        this.trigger(
          work,
          session,
          onSubtaskValidated(scratchpad.pad, event, settings),
          scratchpad,
          event.timestamp,
        );
        return;
      }
      case 'CommitMade': {
        addCommit(pad().pad, event, root);
        pad().changed = true;
        // Renames and deletions move or stale the project's memories: the project stage's work.
        const changes = commitFileChanges(event, root);
        if (changes) (work.projectOf(session.record).fileChanges ??= []).push(changes);
        return;
      }
      case 'RememberRequested':
        addNote(pad().pad, { ...event, text: this.options.redact(event.text) }, root);
        pad().changed = true;
        return;
      case 'TaskClassified':
        setComplexity(pad().pad, event);
        pad().changed = true;
        return;
      case 'FileManifest':
        // The memories' files it does not list: deletions, for the project stage to apply in
        // order with the commits' (the same revision, `reviseMemoriesForCommit`).
        if (sweep) (work.projectOf(session.record).fileChanges ??= []).push(sweep);
        return;
      case 'CompactionPending':
        // Not the observer's.
        return;
    }
  }

  /**
   * Each due promotion goes to the project stage with the scratchpad content it promotes (the
   * rules need the project's statistics, which live there); the segments are digested here, in
   * the same transaction, so a promotion is asked for exactly once.
   */
  private trigger(
    work: Work,
    session: WorkingSession,
    triggers: PromotionTrigger[],
    pad: WorkingPad,
    at: number,
  ): void {
    pad.changed = true;
    const { settings } = this.options;
    for (const trigger of triggers) {
      const content = promotableOf(pad.pad, trigger);
      const segment = pad.pad.segments.find((s) => trigger.segmentIds.includes(s.segmentId));
      markPromoted(pad.pad, trigger, 0, settings.moduleDepth);
      // The spec's final promotion also consolidates its validated subtasks (seed 002 §8), from
      // the digests markPromoted just made; once per scratchpad.
      const consolidation = trigger.consolidate
        ? consolidationCandidates(pad.pad, at, settings)
        : [];
      if (trigger.consolidate) markConsolidated(pad.pad);
      work.projectOf(pad.pad).promotions.push({
        scratchpadId: pad.pad.scratchpadId,
        sessionId: session.record.sessionId,
        trigger,
        at,
        complexity: pad.pad.complexity,
        workUnitRef: segment?.workUnitRef ?? pad.pad.workUnitRoot,
        ...content,
        consolidation,
      });
    }
    this.counters.promotionTriggers += triggers.length;
  }

  /** The ended session's summary, for the project's recent-sessions statistics. */
  private summarise(work: Work, session: WorkingSession, endedAt: number, succeeded: boolean) {
    const summary = session.detector.summarise({ endedAt, succeeded: succeeded ? true : null });
    work.projectOf(session.record).summaries.push(summary);
  }

  /** A session silent for `sessionIdleMs`: closed as if it had ended, without an end time. */
  private expire(work: Work, session: WorkingSession): void {
    for (const { event, fileChanges } of session.record.pending.splice(0)) {
      this.applyLifecycle(work, session, event, fileChanges ?? null);
    }
    if (session.ended) return;
    this.applySignals(work, session, session.detector.finish(), session.record.lastActivityAt);
    const scratchpad = this.padOf(work, session);
    const now = this.watermark(session.record.partition);
    const triggers = expireIdle(scratchpad.pad, now, this.options.settings);
    this.summarise(work, session, session.record.lastActivityAt, scratchpad.pad.everValidated);
    this.trigger(work, session, triggers, scratchpad, now);
    session.ended = true;
    session.changed = true;
    this.counters.sessionsExpired += 1;
  }

  private applySignals(
    work: Work,
    session: WorkingSession,
    signals: ObserverSignal[],
    at: number,
  ): void {
    if (signals.length === 0) return;
    this.counters.signals += signals.length;
    for (const signal of signals) applySignal(session.record.facts, signal, session.changes);
    work.projectOf(session.record).signals.push(...signals);
    const scratchpad = this.padOf(work, session);
    addSignals(scratchpad.pad, session.record.sessionId, signals, at);
    scratchpad.changed = true;
  }

  private noteActivity(session: WorkingSession, at: number): void {
    session.record.lastActivityAt = Math.max(session.record.lastActivityAt, at);
  }

  private noteConsumedTimes(
    times: Map<number, number>,
    items: ReadonlyArray<Delivered<{ timestamp: number }>>,
  ): void {
    for (const { partition, event } of items) {
      times.set(partition, Math.max(times.get(partition) ?? 0, event.timestamp));
    }
  }

  /**
   * The event time up to which partition `partition`'s sessions have been read on both input
   * topics: idle sessions expire, and ended ones are forgotten, by it. Not the latest time seen
   * on any partition: a first start reads one partition's backlog (or one topic's) before
   * another's, and a stream time that far ahead expired sessions whose SessionEnded was still
   * unread on the lagging partition — the same input gave different memories (issue #19).
   */
  private watermark(partition: number): number {
    return Math.min(
      this.consumedTimes.toolCalls.get(partition) ?? 0,
      this.consumedTimes.lifecycle.get(partition) ?? 0,
    );
  }

  /**
   * The transaction's outputs: graph facts written first (the sink must accept them before the
   * offsets commit), then the changed records (or tombstones) for the changelog.
   */
  private async finish(work: Work): Promise<AnyStageOutput[]> {
    const graph = emptyGraphBatch();
    const staged: StagedWrite[] = [];
    for (const session of work.sessions.values()) {
      if (!session.changed) continue;
      const { record } = session;
      record.detector = session.detector.snapshot();
      this.addGraphRows(graph, session);
      const gone = session.ended && record.pending.length === 0;
      if (gone) {
        const pad = work.pads.get(record.scratchpadId) ?? this.padOf(work, session);
        pad.removed = true;
        this.keepEnded(work, session);
      }
      staged.push({
        partition: record.partition,
        key: sessionKey(record.sessionId),
        value: gone ? null : encodeRecord(record),
        index: gone
          ? null
          : {
              partition: record.partition,
              lastActivityAt: record.lastActivityAt,
              pending: record.pending.length,
            },
      });
    }
    for (const ended of work.ended.values()) {
      if (!ended || (!ended.changed && !ended.removed)) continue;
      const { record } = ended;
      staged.push({
        partition: record.partition,
        key: endedSessionKey(record.sessionId),
        value: ended.removed ? null : encodeRecord(record),
        index: ended.removed
          ? null
          : { partition: record.partition, lastActivityAt: record.lastActivityAt },
      });
    }
    for (const [scratchpadId, pad] of work.pads) {
      if (!pad.changed && !pad.removed) continue;
      staged.push({
        partition: pad.partition,
        key: scratchpadKey(scratchpadId),
        value: pad.removed
          ? null
          : encodeRecord({ v: 1, kind: 'scratchpad', partition: pad.partition, pad: pad.pad }),
        index: null,
      });
    }
    if (!isEmptyGraphBatch(graph)) {
      await this.options.writer.write(graph);
      this.counters.graphBatches += 1;
    }
    this.staged = staged;
    this.stagedConsumed = work.consumed;
    this.transformDone = true;
    const changelog: RawStageOutput = {
      topic: this.topics.changelog,
      messages: staged.map(({ key, partition, value }) => ({ key, partition, value })),
    };
    const projectWork: StageOutput<ProjectWork> = {
      codec: this.projectWork,
      events: [...work.projects.values()].filter((w) => !isEmptyProjectWork(w)),
    };
    this.stagedProjectWorks = projectWork.events.length;
    return [changelog, projectWork];
  }

  private addGraphRows(graph: ObserverGraphBatch, session: WorkingSession): void {
    const { record } = session;
    graph.sessions.push({
      tenantId: record.tenantId,
      projectId: record.projectId,
      sessionId: record.sessionId,
      agentId: record.agentId,
      startedAt: minOf(record.startedAt, record.detector.startedAt),
      lastActivityAt: record.lastActivityAt,
      endedAt: record.endedAt,
      toolCalls: record.detector.callCount,
    });
    addFactRows(graph, record, record.facts, record.detector, session.changes);
  }

  /** The session's working copy: from this transaction, the committed bytes, or new. */
  private sessionOf(
    work: Work,
    event: { tenantId: string; projectId: string; sessionId: string; agentId: string },
    partition: number,
  ): WorkingSession {
    const existing = this.loadSession(work, event.sessionId, partition);
    if (existing) return existing;
    const record: SessionRecord = {
      v: 1,
      kind: 'session',
      sessionId: event.sessionId,
      partition,
      tenantId: event.tenantId,
      projectId: event.projectId,
      agentId: event.agentId,
      startedAt: null,
      lastActivityAt: 0,
      endedAt: null,
      detector: null as never,
      facts: emptyFacts(),
      pending: [],
      scratchpadId: scratchpadIdOf(event, null),
      seen: newSeenEvents(),
    };
    const detector = SessionSignalDetector.start(
      event,
      this.projectRoot(record),
      this.options.settings,
    );
    record.detector = detector.snapshot();
    const session: WorkingSession = {
      record,
      detector,
      seen: SeenEvents.of(record.seen!, this.options.settings),
      changes: noChanges(),
      changed: true,
      ended: false,
    };
    work.sessions.set(event.sessionId, session);
    return session;
  }

  private loadSession(work: Work, sessionId: string, partition: number): WorkingSession | null {
    const working = work.sessions.get(sessionId);
    if (working) return working;
    const bytes = this.committedRecords.get(partition, sessionKey(sessionId));
    if (!bytes) return null;
    const record = decodeRecord(bytes) as SessionRecord;
    // A record from before `seen` existed: the detector's recent calls are what it knows.
    record.seen ??= {
      ids: [...record.detector.recentEventIds],
      times: record.detector.recentEventIds.map(() => record.lastActivityAt),
      droppedThrough: null,
    };
    const session: WorkingSession = {
      record,
      detector: SessionSignalDetector.restore(record.detector, this.options.settings),
      seen: SeenEvents.of(record.seen, this.options.settings),
      changes: noChanges(),
      changed: false,
      ended: false,
    };
    work.sessions.set(sessionId, session);
    return session;
  }

  /** The ended session's record: from this transaction, the committed bytes, or null. */
  private loadEnded(work: Work, sessionId: string, partition: number): WorkingEnded | null {
    const working = work.ended.get(sessionId);
    if (working !== undefined) return working;
    const bytes = this.committedRecords.get(partition, endedSessionKey(sessionId));
    let ended: WorkingEnded | null = null;
    if (bytes) {
      const record = decodeRecord(bytes) as EndedSessionRecord;
      ended = {
        record,
        seen: SeenEvents.of(record.seen, this.options.settings),
        changed: false,
        removed: false,
      };
    }
    work.ended.set(sessionId, ended);
    return ended;
  }

  /**
   * The session's run is over and its state goes: its event ids join the session's ended record
   * (created, or extended for a resumed session), kept for `endedSessionRetentionMs`.
   */
  private keepEnded(work: Work, session: WorkingSession): void {
    const { record } = session;
    let ended = this.loadEnded(work, record.sessionId, record.partition);
    if (!ended || ended.removed) {
      const fresh: EndedSessionRecord = {
        v: 1,
        kind: 'ended',
        sessionId: record.sessionId,
        partition: record.partition,
        tenantId: record.tenantId,
        projectId: record.projectId,
        lastActivityAt: record.lastActivityAt,
        endedAt: record.endedAt,
        seen: newSeenEvents(),
      };
      ended = {
        record: fresh,
        seen: SeenEvents.of(fresh.seen, this.options.settings),
        changed: true,
        removed: false,
      };
      work.ended.set(record.sessionId, ended);
    }
    ended.seen.addAll(record.seen!);
    ended.record.lastActivityAt = Math.max(ended.record.lastActivityAt, record.lastActivityAt);
    ended.record.endedAt = record.endedAt ?? ended.record.endedAt;
    ended.changed = true;
  }

  private padOf(work: Work, session: WorkingSession): WorkingPad {
    const { record } = session;
    const working = work.pads.get(record.scratchpadId);
    if (working) return working;
    const bytes = this.committedRecords.get(record.partition, scratchpadKey(record.scratchpadId));
    const pad: WorkingPad = {
      partition: record.partition,
      pad: bytes
        ? (decodeRecord(bytes) as Extract<ObserverRecord, { kind: 'scratchpad' }>).pad
        : newScratchpad({ ...record, timestamp: record.lastActivityAt }, null),
      changed: !bytes,
      removed: false,
    };
    work.pads.set(record.scratchpadId, pad);
    return pad;
  }

  private projectRoot(record: { tenantId: string; projectId: string }): string | null {
    return this.options.projectRootOf?.(record.tenantId, record.projectId) ?? null;
  }

  /** How far the tool-calls partition is consumed: committed, plus this transaction's batch. */
  private consumedOf(work: Work | null, partition: number): number {
    return Math.max(this.toolCallsConsumed.get(partition) ?? 0, work?.consumed.get(partition) ?? 0);
  }

  /** The group's committed tool-call offsets (a predecessor may have consumed them). */
  private async refreshConsumed(partitions: number[]): Promise<void> {
    const unique = [...new Set(partitions)];
    for (const [partition, offset] of await this.options.positions.committedOffsets(unique)) {
      if (offset > (this.toolCallsConsumed.get(partition) ?? 0)) {
        this.toolCallsConsumed.set(partition, offset);
      }
    }
  }

  /** Restores a partition's records from the changelog unless they are in memory. */
  private async ensureRestored(partition: number): Promise<void> {
    this.owned.add(partition);
    await this.committedRecords.ensure(partition, (_key, record) => {
      if (record.kind === 'ended') {
        this.endedIndex.set(record.sessionId, {
          partition,
          lastActivityAt: record.lastActivityAt,
        });
        return;
      }
      if (record.kind !== 'session') return;
      this.index.set(record.sessionId, {
        partition,
        lastActivityAt: record.lastActivityAt,
        pending: record.pending.length,
      });
    });
  }

  private forgetPartition(partition: number): void {
    this.committedRecords.forget(partition);
    this.toolCallsConsumed.delete(partition);
    for (const [sessionId, entry] of [...this.index]) {
      if (entry.partition === partition) this.index.delete(sessionId);
    }
    for (const [sessionId, entry] of [...this.endedIndex]) {
      if (entry.partition === partition) this.endedIndex.delete(sessionId);
    }
  }
}

function minOf(a: number | null, b: number | null): number | null {
  if (a === null) return b;
  if (b === null) return a;
  return Math.min(a, b);
}
