import {
  groupBy,
  latestAt,
  signalEvidence,
  type E2eObservationFacts,
  type MemoryCandidate,
} from '../candidates';
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
  const groups = groupBy(observations, naturalKeyOf);
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
      evidence: signalEvidence(signals),
      facts: { kind: 'e2e_observation', occurrences: signals.length, ...observedFacts(latest) },
    });
  }
  return candidates;
}

/**
 * A test sequence is the state reached (page, text checked) and the steps that reached it, however
 * the state was checked; the other kinds are one action on one page.
 */
function naturalKeyOf(s: E2eObservationSignal): string {
  const key =
    s.observationType === 'test_sequence'
      ? [s.observationType, s.page ?? '', s.target ?? '', s.before.join(' → ')]
      : [s.observationType, s.page ?? '', s.action, s.target ?? ''];
  return key.join('\u0000');
}

function observedFacts(signal: E2eObservationSignal): E2eObservationFacts {
  const { observationType, mcpTool, action, target, page, outcome, before } = signal;
  return { observationType, mcpTool, action, target, page, outcome, before };
}
