// Builders for the observer's unit tests (test support only; not exported from the index).
import type { EventEnvelope, WorkUnitRef } from '@engram/contracts';
import type { ObservedToolCall } from '../observed-call';
import { observerSettings, type ObserverSettings } from '../observer-settings';
import { emptyProjectStats, foldSignal, type ProjectObservationStats } from '../project-stats';
import type { PromotionInput } from '../promotion/promotion-pipeline';
import type { InferenceInput } from '../rules';
import type { SessionSummary } from '../session-summary';
import { SessionSignalDetector } from '../session-signal-detector';
import type { ObserverSignal } from '../signals';

export const T0 = Date.UTC(2026, 1, 18, 9, 0, 0);
export const SECOND = 1000;
export const DAY = 24 * 60 * 60 * SECOND;
export const ROOT = '/home/dev/repo';

export interface CallSpec extends Partial<ObservedToolCall> {
  step: number;
  toolName: string;
}

/** A tool call at `step` (one second apart), event id derived from session and step. */
export function toolCall(spec: CallSpec, sessionId = 's1', startAt = T0): ObservedToolCall {
  return {
    eventId: `${sessionId}-e${spec.step}${spec.eventId ?? ''}`,
    sessionId,
    timestamp: startAt + spec.step * SECOND,
    promptId: 1,
    filePaths: [],
    command: null,
    argsJson: '{}',
    outcome: 'ok',
    errorMessage: null,
    tokensUsed: null,
    ...spec,
    stepIndex: spec.step,
  };
}

/** A browser MCP call; `result` is its result text, `error` makes it a failure. */
export function browserCall(
  step: number,
  toolName: string,
  args: Record<string, unknown>,
  outcome: { result?: string; error?: string } = {},
): CallSpec {
  return {
    step,
    toolName,
    argsJson: JSON.stringify(args),
    outcome: outcome.error === undefined ? 'ok' : 'error',
    errorMessage: outcome.error ?? null,
    resultSummary: outcome.result ?? null,
  };
}

export const read = (step: number, file: string, extra: Partial<CallSpec> = {}): CallSpec => ({
  step,
  toolName: 'Read',
  filePaths: [file],
  ...extra,
});

export const grep = (step: number, file: string): CallSpec => ({
  step,
  toolName: 'Grep',
  filePaths: [file],
});

/** An Edit replacing `before` with `after` (Claude Code's argument shape). */
export const edit = (
  step: number,
  file: string,
  before = `old${step}`,
  after = `new${step}`,
): CallSpec => ({
  step,
  toolName: 'Edit',
  filePaths: [file],
  argsJson: JSON.stringify({ file_path: file, old_string: before, new_string: after }),
});

export const bash = (step: number, command: string, error: string | null = null): CallSpec => ({
  step,
  toolName: 'Bash',
  command,
  argsJson: JSON.stringify({ command }),
  outcome: error === null ? 'ok' : 'error',
  errorMessage: error,
});

export interface SessionRun {
  detector: SessionSignalDetector;
  signals: ObserverSignal[];
}

/** Feeds calls to a fresh detector; with `finish`, also the end-of-session signals. */
export function runSession(
  calls: readonly CallSpec[],
  options: {
    sessionId?: string;
    startAt?: number;
    settings?: ObserverSettings;
    projectRoot?: string | null;
    finish?: boolean;
  } = {},
): SessionRun {
  const sessionId = options.sessionId ?? 's1';
  const detector = SessionSignalDetector.start(
    { tenantId: 'acme', projectId: 'acme/api', sessionId },
    options.projectRoot === undefined ? ROOT : options.projectRoot,
    options.settings ?? observerSettings(),
  );
  const signals: ObserverSignal[] = [];
  for (const spec of calls) {
    signals.push(...detector.observe(toolCall(spec, sessionId, options.startAt)).signals);
  }
  if (options.finish === true) signals.push(...detector.finish());
  return { detector, signals };
}

export function ofType<T extends ObserverSignal['type']>(
  signals: readonly ObserverSignal[],
  type: T,
): Extract<ObserverSignal, { type: T }>[] {
  return signals.filter((s): s is Extract<ObserverSignal, { type: T }> => s.type === type);
}

export function foldAll(stats: ProjectObservationStats, signals: readonly ObserverSignal[]): void {
  for (const signal of signals) foldSignal(stats, signal);
}

/** A session summary with defaults (a validated session ending at T0). */
export function sessionSummary(
  overrides: Partial<SessionSummary> & { sessionId: string },
): SessionSummary {
  return {
    startedAt: T0 - 60 * SECOND,
    endedAt: T0,
    succeeded: true,
    stepCount: 10,
    plannedSteps: null,
    methodology: null,
    filesAccessed: [],
    filesEdited: [],
    modules: [],
    tokensByModule: {},
    totalTokens: 0,
    sequenceKeys: [],
    ...overrides,
  };
}

/** Inference input over signals, with statistics folded from them unless given. */
export function inferenceInput(overrides: Partial<InferenceInput> = {}): InferenceInput {
  const signals = overrides.signals ?? [];
  const stats = overrides.stats ?? emptyProjectStats();
  if (overrides.stats === undefined) foldAll(stats, signals);
  return {
    signals,
    qaIssues: [],
    notes: [],
    stats,
    validated: true,
    now: T0 + DAY,
    settings: observerSettings(),
    ...overrides,
  };
}

/** Envelope fields of a lifecycle event in session `sessionId`. */
export function envelopeOf(eventId: string, sessionId = 's1', at = T0): EventEnvelope {
  return {
    eventId,
    tenantId: 'acme',
    projectId: 'acme/api',
    sessionId,
    agentId: 'claude-code',
    userId: null,
    timestamp: at,
    schemaVersion: 1,
  };
}

export function subtaskRef(spec: string, subtask: number): WorkUnitRef {
  return {
    methodology: 'native',
    hierarchy: [spec, `subtask_${subtask}`],
    label: `${spec} / ${subtask}`,
  };
}

export const MINUTE = 60 * SECOND;

/** Read token.ts, edit session.ts, re-edit it two steps later: co-access and a backtrack. */
export const AUTH_WORK: CallSpec[] = [
  read(0, 'src/auth/token.ts'),
  edit(1, 'src/auth/session.ts'),
  edit(3, 'src/auth/session.ts'),
];

/** `count` sessions of AUTH_WORK, a minute apart (s0, s1, …). */
export function authWorkSessions(count: number): ObserverSignal[] {
  return Array.from(
    { length: count },
    (_, i) => runSession(AUTH_WORK, { sessionId: `s${i}`, startAt: T0 + i * MINUTE }).signals,
  ).flat();
}

/** A validated promotion of `signals`, statistics folded from them, ten minutes after T0. */
export function promotionInput(
  signals: ObserverSignal[],
  overrides: Partial<PromotionInput> = {},
): PromotionInput {
  const stats = emptyProjectStats();
  foldAll(stats, signals);
  return {
    tenantId: 'acme',
    projectId: 'acme/api',
    signals,
    notes: [],
    qaIssues: [],
    commits: [],
    stats,
    validated: true,
    now: T0 + 10 * MINUTE,
    settings: observerSettings(),
    ...overrides,
  };
}

export const NO_RANKING = { complexity: null, alreadyPromoted: 0 } as const;
