import { signalEvidence, groupBy, latestAt, type MemoryCandidate } from '../candidates';
import type { InferenceInput } from './inference-input';
import { signalsOfType } from './rule-helpers';

/**
 * A file read `timeAnomalyReads` (4)+ times in a session without an edit (time_anomaly) →
 * module_insight: the file is confusing or badly structured for the agent.
 */
export function moduleInsightRule(input: InferenceInput): MemoryCandidate[] {
  const byFile = groupBy(signalsOfType(input.signals, 'time_anomaly'), (s) => s.filePath);
  const candidates: MemoryCandidate[] = [];
  for (const [filePath, signals] of byFile) {
    const readCount = Math.max(...signals.map((s) => s.readCount));
    if (readCount < input.settings.timeAnomalyReads) continue;
    const sessionCount = new Set(signals.map((s) => s.sessionId)).size;
    candidates.push({
      key: `module_insight:${filePath}`,
      memoryType: 'module_insight',
      naturalKey: filePath,
      rule: 'module_insight',
      signalType: 'time_anomaly',
      source: 'observer_inferred',
      scope: 'module',
      frequency: sessionCount,
      lastObservedAt: latestAt(signals),
      relatedFiles: [filePath],
      relatedModules: [signals[0].module],
      evidence: signalEvidence(signals),
      facts: {
        kind: 'module_insight',
        filePath,
        module: signals[0].module,
        readCount,
        dwellMs: Math.max(...signals.map((s) => s.dwellMs)),
        sessionCount,
      },
    });
  }
  return candidates;
}
