import type {
  EpisodeBoundaryEvent,
  LifecycleEvent,
  PromptSubmitted,
  ToolCallObserved,
  Typed,
} from '@engram/contracts';
import {
  addPrompt,
  addToolCall,
  addValidation,
  distillationWindow,
  newDistillerSession,
  noteEpisodeClosed,
  noteEpisodeOpened,
  noteSeen,
  progressOf,
  promptContentProblem,
  sessionDone,
  sessionEventsOf,
  takeReadyTriggers,
  waitTarget,
  type DistillationTrigger,
  type DistillerInputOffsets,
  type DistillerRetention,
  type DistillerSessionLimits,
  type DistillerSessionProgress,
} from '@engram/core';
import type { Delivered } from '@engram/core';
import type { Logger } from '@nestjs/common';
import type { DistillerCommittedState } from './distiller-committed-state';
import { decodeRecord, sessionKey } from './distiller-records';
import type { DistillerStageOptions } from './distiller-stage-options';
import { NOTHING, type DistillerCounters, type Work, type WorkingSession } from './distiller-work';

/**
 * What each input event does to its session within a transaction (prompts, tool calls and QA
 * verdicts kept, triggers queued), and which windows the triggers distil once their session's
 * events are consumed. Sessions change in the transaction's copies (Work); of the committed
 * state, only the stream time moves.
 */
export class DistillerEventHandler {
  private readonly limits: DistillerSessionLimits;
  private readonly retention: DistillerRetention;

  constructor(
    private readonly state: DistillerCommittedState,
    private readonly counters: DistillerCounters,
    private readonly options: DistillerStageOptions,
    private readonly logger: Logger,
  ) {
    this.limits = options.settings.limits;
    this.retention = options.settings.retention;
  }

  onPrompt(work: Work, item: Delivered<Typed<'PromptSubmitted'>>): void {
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

  onToolCall(work: Work, item: Delivered<Typed<'ToolCallObserved'>>): void {
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

  onLifecycle(
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

  onBoundary(
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
  drainPartition(work: Work, partition: number): void {
    const sessionIds = new Set<string>();
    for (const [sessionId, entry] of this.state.sessions) {
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
  settle(work: Work, working: WorkingSession): void {
    const consumed =
      work.consumed.get(working.partition) ?? this.state.consumedOf(working.partition);
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
    if (this.state.dedupe.has(window.dedupeKey) || work.distilled.has(window.dedupeKey)) {
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

  isDone(progress: DistillerSessionProgress, now = this.now()): boolean {
    return sessionDone(progress, now, this.retention);
  }

  private now(): number {
    return (this.options.clock ?? Date.now)();
  }

  private touch(working: WorkingSession, at: number): void {
    working.changed = true;
    noteSeen(working.session, this.now());
    this.state.streamTime = Math.max(this.state.streamTime, at);
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

  loadSession(work: Work, sessionId: string, partition: number): WorkingSession | null {
    const working = work.sessions.get(sessionId);
    if (working) return working;
    const bytes = this.state.committedRecords.get(partition, sessionKey(sessionId));
    if (!bytes) return null;
    const record = decodeRecord(bytes);
    if (record.kind !== 'session') return null;
    const loaded = { partition, session: record.session, changed: false };
    work.sessions.set(sessionId, loaded);
    return loaded;
  }
}
