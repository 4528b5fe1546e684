import type { LifecycleEvent, ToolCallObserved, Typed } from '@engram/contracts';
import {
  addCommit,
  addNote,
  addSignals,
  commitFileChanges,
  consolidationCandidates,
  countToolCall,
  expireIdle,
  manifestFileChanges,
  markConsolidated,
  markPromoted,
  onSessionEnded,
  onSubtaskValidated,
  onValidationFailed,
  onValidationPassed,
  promotableOf,
  setComplexity,
  workUnitOutcomeFacts,
  workUnitOutcomeMemory,
  type CommitFileChanges,
  type ObserverSignal,
  type PromotionTrigger,
  type SeenEvent,
  type WorkUnitVerdict,
} from '@engram/core';
import type { Delivered } from '@engram/core';
import type { Logger } from '@nestjs/common';
import type { ObserverCommittedState } from './observer-committed-state';
import type { ObserverStageOptions } from './observer-stage-options';
import type { ObserverCounters, Work, WorkingPad, WorkingSession } from './observer-work';
import type { ObserverWorkingRecords } from './observer-working-records';
import { applySignal } from './session-facts';

/**
 * What each input event does within a transaction: tool calls through the session's signal
 * detector into facts, scratchpad entries and project work; lifecycle events queued until the
 * session's tool calls are consumed, then applied (promotions, session ends); idle sessions
 * expired.
 */
export class ObserverEventHandler {
  constructor(
    private readonly state: ObserverCommittedState,
    private readonly records: ObserverWorkingRecords,
    private readonly counters: ObserverCounters,
    private readonly options: ObserverStageOptions,
    private readonly logger: Logger,
  ) {}

  onToolCall(work: Work, item: Delivered<Typed<'ToolCallObserved'>>): void {
    const call: ToolCallObserved = item.event;
    this.counters.toolCalls += 1;
    if (this.seenBefore(work, call, item.partition)) {
      this.counters.duplicates += 1;
      return;
    }
    const session = this.records.sessionOf(work, call, item.partition);
    const result = session.detector.observe({
      ...call,
      command: call.command === null ? null : this.options.redact(call.command),
      errorMessage: call.errorMessage === null ? null : this.options.redact(call.errorMessage),
      resultSummary: call.resultSummary ? this.options.redact(call.resultSummary) : null,
    });
    this.counters.rejectedPaths += result.rejectedPaths.length;
    if (result.duplicate) {
      this.counters.duplicates += 1;
      return;
    }
    session.seen.add(call);
    session.changed = true;
    this.noteActivity(session, call.timestamp);
    const scratchpad = this.records.padOf(work, session);
    countToolCall(scratchpad.pad);
    scratchpad.changed = true;
    this.applySignals(work, session, result.signals, call.timestamp);
  }

  /**
   * The sweep of each FileManifest of the batch against the project's memories (issue #20): the
   * memories' files it does not list, as deletions (core `manifestFileChanges`). Done here, before
   * the (synchronous) batch, because the lookup is asynchronous; the manifest then waits for its
   * tool calls like any lifecycle event, with its deletions instead of its file list (a manifest
   * can list 100k files: they are never kept in the changelog nor sent to the project stage).
   */
  async manifestSweeps(
    items: Delivered<LifecycleEvent>[],
  ): Promise<Map<Delivered<LifecycleEvent>, CommitFileChanges | null>> {
    const sweeps = new Map<Delivered<LifecycleEvent>, CommitFileChanges | null>();
    const lookup = this.options.memoriesWithFiles;
    if (!lookup) return sweeps;
    for (const item of items) {
      const manifest = item.event;
      if (manifest.type !== 'FileManifest') continue;
      const memories = await lookup.memoriesWithFiles(manifest);
      const changes = manifestFileChanges(manifest, memories, this.records.projectRoot(manifest));
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

  onLifecycle(
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
    const session = this.records.sessionOf(work, item.event, item.partition);
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
    const live = this.records.loadSession(work, event.sessionId, partition);
    if (live?.seen.has(event)) return true;
    const ended = this.records.loadEnded(work, event.sessionId, partition);
    return ended !== null && !ended.removed && ended.seen.has(event);
  }

  /** Applies, in order, the lifecycle events of the partition's sessions whose time has come. */
  drainPartition(work: Work, partition: number): void {
    const consumed = this.state.consumedOf(work, partition);
    const sessionIds = new Set<string>();
    for (const [sessionId, entry] of this.state.index) {
      if (entry.partition === partition && entry.pending > 0) sessionIds.add(sessionId);
    }
    for (const [sessionId, session] of work.sessions) {
      if (session.record.partition === partition && session.record.pending.length > 0) {
        sessionIds.add(sessionId);
      }
    }
    for (const sessionId of sessionIds) {
      const session = this.records.loadSession(work, sessionId, partition);
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
    const pad = () => this.records.padOf(work, session);
    const settings = this.options.settings;
    const root = this.records.projectRoot(record);
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
        this.recordOutcome(work, scratchpad, event);
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
        this.recordOutcome(work, scratchpad, event);
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
        this.recordOutcome(work, scratchpad, event);
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
        // task_calibration's planned steps (issue #20): the session summary prefers these.
        session.detector.noteOrchestratorPlan(event.plannedSteps ?? null);
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

  /**
   * The work unit's outcome (seed 002 §4), read before the verdict closes the segments it judges;
   * the memory goes out in this transaction, so each verdict records it exactly once (a later
   * verdict of the same work unit replaces it: same id).
   */
  private recordOutcome(work: Work, pad: WorkingPad, verdict: WorkUnitVerdict): void {
    const { redact, settings } = this.options;
    const facts = workUnitOutcomeFacts(pad.pad, redactedVerdict(verdict, redact));
    if (facts === null) return;
    const memory = workUnitOutcomeMemory(facts, settings.moduleDepth);
    work.memories.set(memory.memoryId, memory);
    this.counters.workUnitOutcomes += 1;
  }

  /** The ended session's summary, for the project's recent-sessions statistics. */
  private summarise(work: Work, session: WorkingSession, endedAt: number, succeeded: boolean) {
    const summary = session.detector.summarise({ endedAt, succeeded: succeeded ? true : null });
    work.projectOf(session.record).summaries.push(summary);
  }

  /** A session silent for `sessionIdleMs`: closed as if it had ended, without an end time. */
  expire(work: Work, session: WorkingSession): void {
    for (const { event, fileChanges } of session.record.pending.splice(0)) {
      this.applyLifecycle(work, session, event, fileChanges ?? null);
    }
    if (session.ended) return;
    this.applySignals(work, session, session.detector.finish(), session.record.lastActivityAt);
    const scratchpad = this.records.padOf(work, session);
    const now = this.state.watermark(session.record.partition);
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
    const scratchpad = this.records.padOf(work, session);
    addSignals(scratchpad.pad, session.record.sessionId, signals, at);
    scratchpad.changed = true;
  }

  private noteActivity(session: WorkingSession, at: number): void {
    session.record.lastActivityAt = Math.max(session.record.lastActivityAt, at);
  }
}

/** QA's words are written into a memory: redacted like every text the observer keeps. */
function redactedVerdict(verdict: WorkUnitVerdict, redact: (text: string) => string) {
  if (verdict.type === 'SubtaskValidated') return verdict;
  return {
    ...verdict,
    summary: verdict.summary === null ? null : redact(verdict.summary),
    issues: verdict.issues.map((issue) => ({ ...issue, description: redact(issue.description) })),
  };
}
