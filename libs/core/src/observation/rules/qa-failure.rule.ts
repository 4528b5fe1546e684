import type { MemoryCandidate } from '../candidates';
import { groupBy, sortedUnique } from '../candidates';
import { normaliseErrorMessage } from '../error-normalisation';
import { moduleOf } from '../project-paths';
import type { InferenceInput } from './inference-input';

const PROMOTED_SEVERITIES = new Set(['critical', 'high']);

/**
 * QA failures of severity critical or high → error_pattern with source `qa_auto` (seed 002 §8
 * "QA Failure → Reflexion Memory"). The same issue (normalised description and file) reported
 * again is one memory.
 */
export function qaFailureRule(input: InferenceInput): MemoryCandidate[] {
  const failures = input.qaIssues.filter((issue) =>
    PROMOTED_SEVERITIES.has(issue.severity.trim().toLowerCase()),
  );
  const groups = groupBy(
    failures,
    (issue) => `qa\u0000${normaliseErrorMessage(issue.description)}\u0000${issue.file ?? ''}`,
  );
  const candidates: MemoryCandidate[] = [];
  for (const [naturalKey, issues] of groups) {
    const latest = issues.reduce((a, b) => (b.at > a.at ? b : a));
    const relatedModules =
      latest.module !== null
        ? [latest.module]
        : latest.file !== null
          ? [moduleOf(latest.file, input.settings.moduleDepth)]
          : [];
    candidates.push({
      key: `error_pattern:${naturalKey}`,
      memoryType: 'error_pattern',
      naturalKey,
      rule: 'qa_failure',
      signalType: 'qa_failure',
      source: 'qa_auto',
      scope: 'module',
      frequency: issues.length,
      lastObservedAt: latest.at,
      relatedFiles: latest.file !== null ? [latest.file] : [],
      relatedModules,
      evidence: {
        sessionIds: sortedUnique(issues.map((i) => i.sessionId)),
        eventIds: sortedUnique(issues.map((i) => i.eventId)),
        latest: { sessionId: latest.sessionId, promptId: null, at: latest.at },
      },
      facts: {
        kind: 'qa_failure',
        severity: latest.severity.trim().toLowerCase(),
        description: latest.description,
        file: latest.file,
        module: latest.module,
        whatWasTried: latest.whatWasTried,
        recommendation: latest.recommendation,
      },
    });
  }
  return candidates;
}
