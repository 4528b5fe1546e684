import {
  signalEvidence,
  groupBy,
  latestAt,
  sortedUnique,
  type MemoryCandidate,
} from '../candidates';
import type { BacktrackCause } from '../signals';
import type { InferenceInput } from './inference-input';
import { modulesOf, signalsOfType } from './rule-helpers';

/**
 * An edit followed by a re-edit of the same file within `backtrackWindowSteps` (5) (backtrack)
 * → gotcha: the first assumption about the file was wrong. A `cascading_change` backtrack names
 * the files that had to change with it (seed 002 §5: "gotcha (with relatedFiles)").
 */
export function gotchaRule(input: InferenceInput): MemoryCandidate[] {
  const backtracks = signalsOfType(input.signals, 'backtrack').filter(
    (s) => s.reEditedWithinSteps <= input.settings.backtrackWindowSteps,
  );
  const byFile = groupBy(backtracks, (s) => s.filePath);
  const candidates: MemoryCandidate[] = [];
  for (const [filePath, signals] of byFile) {
    const stat = input.stats.backtracks[filePath];
    const occurrences = Math.max(stat?.occurrences ?? 0, signals.length);
    const causes: Partial<Record<BacktrackCause, number>> = { ...(stat?.causes ?? {}) };
    if (stat === undefined) {
      for (const s of signals) causes[s.likelyCause] = (causes[s.likelyCause] ?? 0) + 1;
    }
    const pairedFiles = sortedUnique(
      signals.filter((s) => s.likelyCause === 'cascading_change').flatMap((s) => s.relatedFiles),
    );
    const relatedFiles = [filePath, ...pairedFiles.filter((f) => f !== filePath)];
    candidates.push({
      key: `gotcha:${filePath}`,
      memoryType: 'gotcha',
      naturalKey: filePath,
      rule: 'gotcha',
      signalType: 'backtrack',
      source: 'observer_inferred',
      scope: 'module',
      frequency: occurrences,
      lastObservedAt: latestAt(signals),
      relatedFiles,
      relatedModules: modulesOf(relatedFiles, input.settings.moduleDepth),
      evidence: signalEvidence(signals),
      facts: {
        kind: 'gotcha',
        filePath,
        occurrences,
        withinSteps: Math.min(...signals.map((s) => s.reEditedWithinSteps)),
        causes,
        pairedFiles,
      },
    });
  }
  return candidates;
}
