import { detectBacktracks } from './backtrack-detection';
import { detectCoAccess } from './co-access-detection';
import {
  cloneDetectorState,
  MAX_ACTIVITY,
  newDetectorState,
  pushBounded,
  RECENT_EVENT_IDS,
  type DetectorState,
} from './detector-state';
import { detectE2eObservation, finishE2eObservation } from './e2e-observation-detection';
import { finishErrors, noteEdits, recordFailure, resolveErrors } from './error-retry-detection';
import { detectFileAccess, detectTimeAnomaly } from './file-access-detection';
import type { CallContext, ObservedToolCall } from './observed-call';
import type { ObserverSettings } from './observer-settings';
import {
  moduleOf,
  normaliseProjectPath,
  ProjectPathError,
  PROJECT_ROOT_PATH,
} from './project-paths';
import { applyEditToStack, deadEndSignal, filesRevertedByCommand } from './revert-detection';
import { detectSequences } from './sequence-detection';
import {
  noteOrchestratorPlan,
  notePlan,
  summariseSession,
  type SessionOutcome,
  type SessionSummary,
} from './session-summary';
import type { ObserverSignal } from './signals';
import { toolKindOf } from './tool-kinds';

export interface RejectedPath {
  path: string;
  reason: ProjectPathError['reason'];
  message: string;
}

export interface DetectionResult {
  signals: ObserverSignal[];
  /** Paths of the call that could not be placed in the project (dropped, to be counted). */
  rejectedPaths: RejectedPath[];
  /** The call was seen before (redelivery): nothing changed. */
  duplicate: boolean;
}

/**
 * The per-session signal detector (SPEC §5): feed it the session's tool calls in order, get the
 * signals each call completes. All of its state is the plain-JSON `DetectorState` (`snapshot` /
 * `restore`), so the service persists it with its offsets and resumes after a crash exactly
 * where it stopped. Deterministic: no clock, no randomness — times come from the events.
 */
export class SessionSignalDetector {
  private constructor(
    private readonly state: DetectorState,
    private readonly settings: ObserverSettings,
  ) {}

  static start(
    session: { tenantId: string; projectId: string; sessionId: string },
    projectRoot: string | null,
    settings: ObserverSettings,
  ): SessionSignalDetector {
    return new SessionSignalDetector(newDetectorState(session, projectRoot), settings);
  }

  static restore(state: DetectorState, settings: ObserverSettings) {
    return new SessionSignalDetector(cloneDetectorState(state), settings);
  }

  snapshot(): DetectorState {
    return cloneDetectorState(this.state);
  }

  observe(call: ObservedToolCall): DetectionResult {
    const { state } = this;
    if (state.recentEventIds.includes(call.eventId)) {
      return { signals: [], rejectedPaths: [], duplicate: true };
    }
    pushBounded(state.recentEventIds, call.eventId, RECENT_EVENT_IDS);
    const { files, rejectedPaths } = this.normalisePaths(call.filePaths);
    const context: CallContext = {
      call,
      kind: toolKindOf(call.toolName, this.settings.toolKinds),
      files,
      settings: this.settings,
    };
    this.advanceClock(call);
    this.countTokens(context);
    notePlan(state, call.plannedSteps ?? null);
    const signals = call.outcome === 'error' ? this.onFailure(context) : this.onSuccess(context);
    signals.push(...detectE2eObservation(state, context));
    return { signals, rejectedPaths, duplicate: false };
  }

  /** A TaskClassified's planned steps: the orchestrator's plan for the session's task. */
  noteOrchestratorPlan(plannedSteps: number | null): void {
    noteOrchestratorPlan(this.state, plannedSteps);
  }

  /** At SessionEnded: closes what only the end can close (errors, browser failures unresolved). */
  finish(): ObserverSignal[] {
    return [...finishErrors(this.state), ...finishE2eObservation(this.state)];
  }

  /** The session's summary for the project statistics (at SessionEnded, after `finish`). */
  summarise(outcome: SessionOutcome): SessionSummary {
    return summariseSession(this.state, outcome);
  }

  private onFailure(context: CallContext): ObserverSignal[] {
    recordFailure(this.state, context);
    this.recordActivity(context.call.stepIndex, 'error', context.files);
    return [];
  }

  private onSuccess(context: CallContext): ObserverSignal[] {
    const { state } = this;
    const signals: ObserverSignal[] = [...resolveErrors(state, context)];
    const access = detectFileAccess(state, context);
    signals.push(...access.signals);
    const touched = context.kind === 'read' || context.kind === 'edit' ? access.fresh : [];
    signals.push(...detectCoAccess(state, context, touched));
    if (context.kind === 'edit') signals.push(...this.onEdit(context, access.fresh));
    if (context.kind === 'read') signals.push(...detectTimeAnomaly(state, context, access.fresh));
    if (context.kind === 'execute') {
      const reverted = filesRevertedByCommand(state, context);
      if (reverted.length > 0) signals.push(deadEndSignal(state, context, reverted));
    }
    this.recordActivity(context.call.stepIndex, context.kind, context.files);
    signals.push(...detectSequences(state, context));
    return signals;
  }

  private onEdit(context: CallContext, fresh: readonly string[]): ObserverSignal[] {
    const signals: ObserverSignal[] = [...detectBacktracks(this.state, context, fresh)];
    const step = context.call.stepIndex;
    const reverted: string[] = [];
    for (const filePath of fresh) {
      const file = this.state.files[filePath];
      file.approachStartStep ??= step;
      if (applyEditToStack(this.state, context, filePath)) reverted.push(filePath);
      file.lastEditStep = step;
      file.edits += 1;
    }
    if (reverted.length > 0) signals.push(deadEndSignal(this.state, context, reverted));
    noteEdits(this.state, fresh);
    return signals;
  }

  private normalisePaths(rawPaths: readonly string[]) {
    const files: string[] = [];
    const rejectedPaths: RejectedPath[] = [];
    for (const raw of rawPaths) {
      try {
        const path = normaliseProjectPath(raw, this.state.projectRoot);
        if (path !== PROJECT_ROOT_PATH && !files.includes(path)) files.push(path);
      } catch (error) {
        if (!(error instanceof ProjectPathError)) throw error;
        rejectedPaths.push({ path: raw, reason: error.reason, message: error.message });
      }
    }
    return { files, rejectedPaths };
  }

  private advanceClock(call: ObservedToolCall): void {
    const { state } = this;
    state.startedAt = Math.min(state.startedAt ?? call.timestamp, call.timestamp);
    state.lastAt = Math.max(state.lastAt, call.timestamp);
    state.maxStep = Math.max(state.maxStep, call.stepIndex);
    state.callCount += 1;
  }

  /** A call's tokens count towards the modules of its files, split evenly between them. */
  private countTokens(context: CallContext): void {
    const tokens = context.call.tokensUsed ?? 0;
    if (!(tokens > 0)) return;
    this.state.totalTokens += tokens;
    const modules = [...new Set(context.files.map((f) => moduleOf(f, this.settings.moduleDepth)))];
    for (const module of modules) {
      this.state.tokensByModule[module] =
        (this.state.tokensByModule[module] ?? 0) + tokens / modules.length;
    }
  }

  private recordActivity(
    step: number,
    kind: DetectorState['activity'][number]['kind'],
    files: string[],
  ) {
    pushBounded(this.state.activity, { step, kind, files }, MAX_ACTIVITY);
  }
}
