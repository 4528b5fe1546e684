import {
  groupBy,
  latestAt,
  signalEvidence,
  sortedUnique,
  type CandidateEvidence,
  type E2eObservationFacts,
  type MemoryCandidate,
} from '../candidates';
import { e2eObservationKey } from '../e2e-observation-key';
import type { E2eObservationSignal } from '../signals';
import type { InferenceInput } from './inference-input';
import { modulesOf, signalsOfType } from './rule-helpers';

/**
 * What a QA agent's browser automation MCP tools showed (e2e-observation-detection.ts) →
 * e2e_observation with source `mcp_auto`, scope global ("UI behaviours apply globally, not to one
 * work unit") and always for review (seed 002 §9: automation can misclassify). The same kind of
 * observation of the same action on the same page (a test sequence: the same steps to the same
 * state) is one memory, however often it recurs; its
 * files (a component, a test) are related when the calls named any.
 */
export function e2eObservationRule(input: InferenceInput): MemoryCandidate[] {
  const observations = signalsOfType(input.signals, 'e2e_observation');
  const groups = groupBy(observations, e2eObservationKey);
  const candidates: MemoryCandidate[] = [];
  for (const [naturalKey, signals] of groups) {
    const latest = signals.reduce((a, b) => (b.at > a.at ? b : a));
    const relatedFiles = [...new Set(signals.flatMap((s) => s.files))].sort();
    candidates.push({
      key: `e2e_observation:${naturalKey}`,
      memoryType: 'e2e_observation',
      naturalKey,
      rule: 'e2e_observation',
      signalType: 'e2e_observation',
      source: 'mcp_auto',
      scope: 'global',
      frequency: signals.length,
      lastObservedAt: latestAt(signals),
      relatedFiles,
      relatedModules: modulesOf(relatedFiles, input.settings.moduleDepth),
      evidence: withEarlierSessions(signalEvidence(signals), input, naturalKey),
      facts: { kind: 'e2e_observation', occurrences: signals.length, ...observedFacts(latest) },
    });
  }
  return candidates;
}

/**
 * The sessions that saw the same observation before (the project statistics) count too: a
 * promotion only holds its own scratchpad's signals, and an observation seen again in another
 * session is the one seed 002 §15 Q6 confirms.
 */
function withEarlierSessions(
  evidence: CandidateEvidence,
  input: InferenceInput,
  naturalKey: string,
): CandidateEvidence {
  const earlier = input.stats.e2eSessions?.[naturalKey] ?? [];
  return { ...evidence, sessionIds: sortedUnique([...evidence.sessionIds, ...earlier]) };
}

function observedFacts(signal: E2eObservationSignal): E2eObservationFacts {
  const { observationType, mcpTool, action, target, page, outcome, before } = signal;
  return { observationType, mcpTool, action, target, page, outcome, before };
}
