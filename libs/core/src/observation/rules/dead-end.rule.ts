import { signalEvidence, groupBy, latestAt, type MemoryCandidate } from '../candidates';
import type { DeadEndSignal, FileAccessSignal } from '../signals';
import type { InferenceInput } from './inference-input';
import { modulesOf, signalsOfType } from './rule-helpers';

const MAX_ALTERNATIVE_FILES = 5;

/**
 * An approach abandoned — its edits fully reverted (seed 002 §15 Q3 proxy), or reverted after
 * `deadEndMinSteps` (20)+ steps — → dead_end. "What was done instead" is the files edited after
 * the revert in the same session. The same files reverted over the same first error are one
 * dead end, however often it recurs.
 */
export function deadEndRule(input: InferenceInput): MemoryCandidate[] {
  const deadEnds = signalsOfType(input.signals, 'dead_end');
  const edits = signalsOfType(input.signals, 'file_access').filter((s) => s.access === 'edit');
  const groups = groupBy(
    deadEnds,
    (s) => `${s.revertedFiles.join('\u0000')}|${s.errorsSeen[0] ?? ''}`,
  );
  const candidates: MemoryCandidate[] = [];
  for (const [naturalKey, signals] of groups) {
    const longest = signals.reduce((a, b) => (b.stepsSpent > a.stepsSpent ? b : a));
    const relatedFiles = [...new Set([...longest.revertedFiles, ...longest.approachFiles])].sort();
    candidates.push({
      key: `dead_end:${naturalKey}`,
      memoryType: 'dead_end',
      naturalKey,
      rule: 'dead_end',
      signalType: 'dead_end',
      source: 'observer_inferred',
      scope: 'module',
      frequency: signals.length,
      lastObservedAt: latestAt(signals),
      relatedFiles,
      relatedModules: modulesOf(relatedFiles, input.settings.moduleDepth),
      evidence: signalEvidence(signals),
      facts: {
        kind: 'dead_end',
        trigger: longest.trigger,
        revertedFiles: longest.revertedFiles,
        approachFiles: longest.approachFiles,
        stepsSpent: longest.stepsSpent,
        revertCommand: longest.revertCommand,
        errorsSeen: longest.errorsSeen,
        alternativeFiles: alternativeFiles(longest, edits),
      },
    });
  }
  return candidates;
}

function alternativeFiles(deadEnd: DeadEndSignal, edits: readonly FileAccessSignal[]): string[] {
  const after = edits
    .filter((e) => e.sessionId === deadEnd.sessionId && e.stepIndex > deadEnd.stepIndex)
    .sort((a, b) => a.stepIndex - b.stepIndex)
    .map((e) => e.filePath);
  return [...new Set(after)].slice(0, MAX_ALTERNATIVE_FILES);
}
