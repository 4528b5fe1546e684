import { moduleOf } from './project-paths';
import type { DetectorState, FileState } from './detector-state';
import { signalBase, signalIdOf, type CallContext } from './observed-call';
import type { FileAccessSignal, TimeAnomalySignal } from './signals';

/**
 * file_access for every file of a successful call, once per file and step: a file read by two
 * tools in the same step (parallel calls) is one access, so it is neither counted twice towards
 * a time anomaly nor co-accessed with itself. Returns the signals and the files new at this step.
 */
export function detectFileAccess(
  state: DetectorState,
  context: CallContext,
): { signals: FileAccessSignal[]; fresh: string[] } {
  const step = context.call.stepIndex;
  const signals: FileAccessSignal[] = [];
  const fresh: string[] = [];
  for (const filePath of context.files) {
    const existing = state.files[filePath];
    if (existing !== undefined && existing.lastAccessStep === step) continue;
    const file = existing ?? newFileState(filePath, context);
    state.files[filePath] = file;
    file.lastAccessStep = step;
    fresh.push(filePath);
    const id = signalIdOf(context, 'file_access', filePath);
    signals.push({
      ...signalBase(context, id, [context.call.eventId]),
      type: 'file_access',
      filePath,
      module: file.module,
      toolName: context.call.toolName,
      access: context.kind,
      firstInSession: existing === undefined,
    });
  }
  return { signals, fresh };
}

/**
 * time_anomaly: a file read `timeAnomalyReads` times in the session with no edit so far. Emitted
 * once, when the threshold is crossed, so the signal is available to a mid-session promotion.
 */
export function detectTimeAnomaly(
  state: DetectorState,
  context: CallContext,
  freshReads: readonly string[],
): TimeAnomalySignal[] {
  const signals: TimeAnomalySignal[] = [];
  for (const filePath of freshReads) {
    const file = state.files[filePath];
    file.reads += 1;
    file.firstReadAt ??= context.call.timestamp;
    if (file.anomalyEmitted || file.edits > 0) continue;
    if (file.reads < context.settings.timeAnomalyReads) continue;
    file.anomalyEmitted = true;
    signals.push({
      ...signalBase(context, signalIdOf(context, 'time_anomaly', filePath), [context.call.eventId]),
      type: 'time_anomaly',
      filePath,
      module: file.module,
      readCount: file.reads,
      dwellMs: context.call.timestamp - file.firstReadAt,
    });
  }
  return signals;
}

function newFileState(filePath: string, context: CallContext): FileState {
  return {
    module: moduleOf(filePath, context.settings.moduleDepth),
    reads: 0,
    edits: 0,
    firstReadAt: null,
    lastAccessStep: -1,
    lastEditStep: null,
    anomalyEmitted: false,
    backtracked: false,
    approachStartStep: null,
    editStack: [],
  };
}
