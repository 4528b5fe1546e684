import {
  signalEvidence,
  groupBy,
  latestAt,
  sortedUnique,
  type MemoryCandidate,
} from '../candidates';
import type { InferenceInput } from './inference-input';
import { modulesOf, signalsOfType } from './rule-helpers';

/**
 * The same error (tool + normalised message) `errorPatternMinOccurrences` (3)+ times, counted
 * over the project (statistics) or the scratchpad, whichever saw more → error_pattern, with the
 * ways it was resolved, most frequent first.
 */
export function errorPatternRule(input: InferenceInput): MemoryCandidate[] {
  const byKey = groupBy(signalsOfType(input.signals, 'error_retry'), (s) => s.errorKey);
  const candidates: MemoryCandidate[] = [];
  for (const [errorKey, signals] of byKey) {
    const stat = input.stats.errors[errorKey];
    const local = signals.reduce((sum, s) => sum + s.occurrences, 0);
    const occurrences = Math.max(stat?.occurrences ?? 0, local);
    if (occurrences < input.settings.errorPatternMinOccurrences) continue;
    const files = sortedUnique(signals.flatMap((s) => [...s.files, ...s.editedFiles]));
    const latest = signals.reduce((a, b) => (b.at > a.at ? b : a));
    candidates.push({
      key: `error_pattern:${errorKey}`,
      memoryType: 'error_pattern',
      naturalKey: errorKey,
      rule: 'error_pattern',
      signalType: 'error_retry',
      source: 'observer_inferred',
      scope: 'module',
      frequency: occurrences,
      lastObservedAt: latestAt(signals),
      relatedFiles: files,
      relatedModules: modulesOf(files, input.settings.moduleDepth),
      evidence: signalEvidence(signals),
      facts: {
        kind: 'error_pattern',
        toolName: latest.toolName,
        normalisedError: latest.normalisedError,
        sampleMessage: latest.sampleMessage,
        occurrences,
        resolutions: resolutionsOf(signals, stat?.resolutions ?? {}),
      },
    });
  }
  return candidates;
}

function resolutionsOf(
  signals: ReadonlyArray<{ resolvedHow: string | null }>,
  known: Readonly<Record<string, number>>,
): string[] {
  const counts = new Map(Object.entries(known));
  for (const { resolvedHow } of signals) {
    if (resolvedHow !== null && !(resolvedHow in known)) {
      counts.set(resolvedHow, (counts.get(resolvedHow) ?? 0) + 1);
    }
  }
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .map(([how]) => how)
    .slice(0, 3);
}
