import {
  addUnique,
  MAX_ERROR_EVENT_IDS,
  MAX_FILES_PER_SIGNAL,
  MAX_RECENT_ERRORS,
  pushBounded,
  type DetectorState,
  type OpenError,
} from './detector-state';
import { errorKeyOf, normaliseErrorMessage } from './error-normalisation';
import { idOf } from '../ids/deterministic-id';
import type { CallContext } from './observed-call';
import type { ErrorResolution, ErrorRetrySignal } from './signals';

const MAX_SAMPLE_CHARS = 500;

/**
 * A failing call opens (or repeats) an error keyed by tool and normalised message. It stays open
 * until a later successful call of the same tool on the same target (command head, or files),
 * which resolves it; `finishErrors` closes the rest as unresolved when the session ends.
 */
export function recordFailure(state: DetectorState, context: CallContext): void {
  const { call } = context;
  const normalisedError = normaliseErrorMessage(call.errorMessage ?? '');
  const errorKey = errorKeyOf(call.toolName, normalisedError);
  const open = state.openErrors[errorKey] ?? newOpenError(errorKey, normalisedError, context);
  open.occurrences += 1;
  open.lastStep = call.stepIndex;
  open.lastPromptId = call.promptId;
  open.lastAt = call.timestamp;
  open.sampleMessage = (call.errorMessage ?? '').slice(0, MAX_SAMPLE_CHARS);
  open.lastArgs = argsOf(context);
  open.editedSinceFailure = [];
  pushBounded(open.eventIds, call.eventId, MAX_ERROR_EVENT_IDS);
  state.openErrors[errorKey] = open;
  pushBounded(state.recentErrors, { step: call.stepIndex, normalisedError }, MAX_RECENT_ERRORS);
}

/** Resolves the open errors this successful call retries; returns their error_retry signals. */
export function resolveErrors(state: DetectorState, context: CallContext): ErrorRetrySignal[] {
  const target = targetOf(context);
  const signals: ErrorRetrySignal[] = [];
  for (const open of Object.values(state.openErrors)) {
    if (open.toolName !== context.call.toolName || open.target !== target) continue;
    delete state.openErrors[open.errorKey];
    const resolution = resolutionOf(open, context);
    signals.push(errorSignal(state, open, resolution, context));
  }
  return signals;
}

/** Files edited while errors are open: the likely fix when the retry then succeeds. */
export function noteEdits(state: DetectorState, files: readonly string[]): void {
  for (const open of Object.values(state.openErrors)) {
    for (const file of files) addUnique(open.editedSinceFailure, file, MAX_FILES_PER_SIGNAL);
  }
}

/** At session end: every error still open, as unresolved (completed by its last failure). */
export function finishErrors(state: DetectorState): ErrorRetrySignal[] {
  const open = Object.values(state.openErrors).sort((a, b) => a.firstStep - b.firstStep);
  state.openErrors = {};
  return open.map((error) => errorSignal(state, error, 'unresolved', null));
}

/** `resolver` is the successful call; null for an unresolved error. */
function errorSignal(
  state: DetectorState,
  open: OpenError,
  resolution: ErrorResolution,
  resolver: CallContext | null,
): ErrorRetrySignal {
  const firstInSession = state.errorKeysSeen[open.errorKey] === undefined;
  state.errorKeysSeen[open.errorKey] = true;
  const lastFailure = open.eventIds[open.eventIds.length - 1];
  const completedBy = resolver?.call.eventId ?? lastFailure;
  return {
    signalId: idOf(state.sessionId, 'error_retry', completedBy, open.errorKey, open.firstStep),
    sessionId: state.sessionId,
    at: resolver?.call.timestamp ?? open.lastAt,
    stepIndex: resolver?.call.stepIndex ?? open.lastStep,
    promptId: resolver?.call.promptId ?? open.lastPromptId,
    eventIds: resolver ? [...open.eventIds, resolver.call.eventId] : [...open.eventIds],
    type: 'error_retry',
    toolName: open.toolName,
    errorKey: open.errorKey,
    normalisedError: open.normalisedError,
    sampleMessage: open.sampleMessage,
    occurrences: open.occurrences,
    resolution,
    resolvedHow: resolver ? describeResolution(open, resolution, resolver) : null,
    files: open.files,
    editedFiles: resolution === 'edited_files' ? [...open.editedSinceFailure] : [],
    firstInSession,
  };
}

function resolutionOf(open: OpenError, context: CallContext): ErrorResolution {
  if (open.editedSinceFailure.length > 0) return 'edited_files';
  return argsOf(context) === open.lastArgs ? 'retried_unchanged' : 'changed_arguments';
}

function describeResolution(
  open: OpenError,
  resolution: ErrorResolution,
  context: CallContext,
): string {
  switch (resolution) {
    case 'edited_files':
      return `fixed by editing ${open.editedSinceFailure.join(', ')}`;
    case 'changed_arguments':
      return context.call.command !== null
        ? `succeeded with \`${context.call.command.slice(0, 200)}\``
        : `succeeded after changing the ${context.call.toolName} arguments`;
    case 'retried_unchanged':
      return 'succeeded when retried unchanged (flaky or timing-dependent)';
    case 'unresolved':
      return 'unresolved';
  }
}

function newOpenError(errorKey: string, normalisedError: string, context: CallContext): OpenError {
  return {
    errorKey,
    toolName: context.call.toolName,
    normalisedError,
    sampleMessage: '',
    occurrences: 0,
    firstStep: context.call.stepIndex,
    lastStep: context.call.stepIndex,
    lastPromptId: context.call.promptId,
    lastAt: context.call.timestamp,
    target: targetOf(context),
    lastArgs: '',
    files: context.files.slice(0, MAX_FILES_PER_SIGNAL),
    editedSinceFailure: [],
    eventIds: [],
  };
}

/**
 * What a call aims at: the head of its command (`npm test`, `git push`, environment assignments
 * skipped), else its files. A Bash `ls` must not "resolve" a failing `npm test`.
 */
export function targetOf(context: CallContext): string {
  const { command } = context.call;
  if (command !== null && command.trim() !== '') {
    const words = command
      .trim()
      .split(/\s+/)
      .filter((word) => !/^\w+=/.test(word));
    return `cmd:${words.slice(0, 2).join(' ')}`;
  }
  return `files:${[...context.files].sort().join('\u0000')}`;
}

function argsOf(context: CallContext): string {
  return context.call.command ?? context.call.argsJson;
}
