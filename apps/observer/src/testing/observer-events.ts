// Builders of the observer's input events, for its unit and integration tests (test support only).
import type { Typed } from '@engram/contracts';
import {
  emptyProjectStats,
  foldSignal,
  observerSettings,
  SessionSignalDetector,
  type ObserverSettings,
  type ProjectObservationStats,
} from '@engram/core';

export const T0 = Date.UTC(2026, 2, 2, 9, 0, 0);

export interface Scope {
  tenantId: string;
  projectId: string;
}

export const ACME: Scope = { tenantId: 'acme', projectId: 'acme/api' };

function envelope(scope: Scope, sessionId: string, eventId: string, timestamp: number) {
  return {
    eventId,
    tenantId: scope.tenantId,
    projectId: scope.projectId,
    sessionId,
    agentId: 'claude-code',
    userId: null,
    timestamp,
    schemaVersion: 1,
  };
}

export interface CallSpec {
  tool: 'Read' | 'Edit' | 'Grep' | 'Bash';
  files?: string[];
  command?: string;
  error?: string;
}

/** A session's tool calls, one step (and one second) apart from `startAt`. */
export function sessionCalls(
  scope: Scope,
  sessionId: string,
  specs: CallSpec[],
  startAt = T0,
): Typed<'ToolCallObserved'>[] {
  return specs.map((spec, step) => ({
    type: 'ToolCallObserved',
    ...envelope(scope, sessionId, `${sessionId}:call:${step}`, startAt + step * 1000),
    promptId: 1,
    stepIndex: step,
    toolName: spec.tool,
    filePaths: spec.files ?? [],
    command: spec.command ?? null,
    argsJson: '{}',
    outcome: spec.error === undefined ? 'ok' : 'error',
    errorMessage: spec.error ?? null,
    durationMs: 50,
    tokensUsed: null,
    mcp: false,
  }));
}

export const read = (...files: string[]): CallSpec => ({ tool: 'Read', files });
export const edit = (...files: string[]): CallSpec => ({ tool: 'Edit', files });
export const bash = (command: string, error?: string): CallSpec => ({
  tool: 'Bash',
  command,
  ...(error !== undefined && { error }),
});

export function sessionStarted(
  scope: Scope,
  sessionId: string,
  at: number,
): Typed<'SessionStarted'> {
  return {
    type: 'SessionStarted',
    ...envelope(scope, sessionId, `${sessionId}:start`, at),
    agentKind: 'claude-code',
    gitBranch: null,
    gitHeadSha: null,
    methodology: null,
    workUnitRef: null,
  };
}

export function sessionEnded(scope: Scope, sessionId: string, at: number): Typed<'SessionEnded'> {
  return {
    type: 'SessionEnded',
    ...envelope(scope, sessionId, `${sessionId}:end`, at),
    userMessageCount: 3,
    durationS: 60,
    reason: 'exit',
  };
}

export function validationPassed(
  scope: Scope,
  sessionId: string,
  at: number,
): Typed<'ValidationPassed'> {
  return {
    type: 'ValidationPassed',
    ...envelope(scope, sessionId, `${sessionId}:validated:${at}`, at),
    workUnitRef: null,
    summary: 'tests pass',
    issues: [],
  };
}

/** Subtask `index` of spec `spec-1` (of `subtaskCount`) passed its validation. */
export function subtaskValidated(
  scope: Scope,
  sessionId: string,
  at: number,
  index: number,
  subtaskCount: number,
): Typed<'SubtaskValidated'> {
  return {
    type: 'SubtaskValidated',
    ...envelope(scope, sessionId, `${sessionId}:subtask:${index}`, at),
    workUnitRef: {
      methodology: 'native',
      hierarchy: ['spec-1', `subtask-${index}`],
      label: `Spec 1 / Subtask ${index}`,
    },
    succeeded: true,
    subtaskCount,
  };
}

export function rememberRequested(
  scope: Scope,
  sessionId: string,
  at: number,
  text: string,
): Typed<'RememberRequested'> {
  return {
    type: 'RememberRequested',
    ...envelope(scope, sessionId, `${sessionId}:remember:${at}`, at),
    text,
    memoryType: 'gotcha',
    relatedFiles: [],
  };
}

/**
 * What the pure core says the project's statistics are after these sessions (each complete, in
 * order, ended): the reference the service's graph must agree with.
 */
export function coreStats(
  sessions: Typed<'ToolCallObserved'>[][],
  settings: ObserverSettings = observerSettings(),
): ProjectObservationStats {
  const stats = emptyProjectStats();
  for (const calls of sessions) {
    if (calls.length === 0) continue;
    const detector = SessionSignalDetector.start(calls[0], null, settings);
    for (const call of calls) {
      for (const signal of detector.observe(call).signals) foldSignal(stats, signal);
    }
    for (const signal of detector.finish()) foldSignal(stats, signal);
  }
  return stats;
}
