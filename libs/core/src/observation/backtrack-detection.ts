import type { DetectorState } from './detector-state';
import { signalBase, signalIdOf, type CallContext } from './observed-call';
import type { BacktrackCause, BacktrackSignal } from './signals';

/**
 * backtrack: a file edited again within `backtrackWindowSteps` of its previous edit (a later
 * step; two edits in one step are one change). The likely cause comes from what happened in
 * between, most telling first: other files edited → `cascading_change` (the edit needed paired
 * edits); other files read or searched → `missing_context` (the agent went to look something
 * up); otherwise, or after a failure → `wrong_assumption` (the first edit was simply wrong).
 * Call before the edit is recorded on the file.
 */
export function detectBacktracks(
  state: DetectorState,
  context: CallContext,
  editedFiles: readonly string[],
): BacktrackSignal[] {
  const step = context.call.stepIndex;
  const signals: BacktrackSignal[] = [];
  for (const filePath of editedFiles) {
    const file = state.files[filePath];
    const last = file.lastEditStep;
    if (last === null || step <= last || step - last > context.settings.backtrackWindowSteps) {
      continue;
    }
    const { cause, relatedFiles } = likelyCause(state, filePath, last, step);
    const firstInSession = !file.backtracked;
    file.backtracked = true;
    signals.push({
      ...signalBase(context, signalIdOf(context, 'backtrack', filePath), [context.call.eventId]),
      type: 'backtrack',
      filePath,
      module: file.module,
      reEditedWithinSteps: step - last,
      likelyCause: cause,
      relatedFiles,
      firstInSession,
    });
  }
  return signals;
}

function likelyCause(
  state: DetectorState,
  filePath: string,
  fromStep: number,
  toStep: number,
): { cause: BacktrackCause; relatedFiles: string[] } {
  const between = state.activity.filter((entry) => entry.step > fromStep && entry.step < toStep);
  const others = (kinds: readonly string[]) => [
    ...new Set(
      between
        .filter((entry) => kinds.includes(entry.kind))
        .flatMap((entry) => entry.files)
        .filter((file) => file !== filePath),
    ),
  ];
  const edited = others(['edit']);
  if (edited.length > 0) return { cause: 'cascading_change', relatedFiles: edited.sort() };
  if (between.some((entry) => entry.kind === 'error')) {
    return { cause: 'wrong_assumption', relatedFiles: [] };
  }
  const consulted = others(['read', 'search']);
  if (consulted.length > 0) return { cause: 'missing_context', relatedFiles: consulted.sort() };
  return { cause: 'wrong_assumption', relatedFiles: [] };
}
