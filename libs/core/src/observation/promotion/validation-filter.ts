import { filesOfSignal, type DeadEndSignal, type ObserverSignal } from '../signals';

/**
 * Stage 0 of the promotion pipeline (seed 002 §5): signals of an approach that was tried and
 * abandoned are not knowledge about the code, only about the abandoned attempt, which its
 * dead_end signal records. Dropped: signals of the same session completed between the start of
 * the reverted approach and the revert that touch a reverted file, and the errors of that span
 * (they are the dead end's `errorsSeen`). Segments whose validation failed are dropped earlier,
 * by the scratchpad.
 */
export function filterAbandonedApproaches(signals: readonly ObserverSignal[]): {
  kept: ObserverSignal[];
  discarded: ObserverSignal[];
} {
  const deadEnds = signals.filter((s): s is DeadEndSignal => s.type === 'dead_end');
  const kept: ObserverSignal[] = [];
  const discarded: ObserverSignal[] = [];
  for (const signal of signals) {
    if (signal.type !== 'dead_end' && deadEnds.some((d) => belongsToApproach(signal, d))) {
      discarded.push(signal);
    } else {
      kept.push(signal);
    }
  }
  return { kept, discarded };
}

function belongsToApproach(signal: ObserverSignal, deadEnd: DeadEndSignal): boolean {
  if (signal.sessionId !== deadEnd.sessionId) return false;
  if (signal.stepIndex < deadEnd.approachStartStep || signal.stepIndex > deadEnd.stepIndex) {
    return false;
  }
  if (signal.type === 'error_retry') return true;
  return filesOfSignal(signal).some((file) => deadEnd.revertedFiles.includes(file));
}
