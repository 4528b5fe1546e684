import { signalEvidence, groupBy, latestAt, type MemoryCandidate } from '../candidates';
import { pairKeyOf } from '../co-access-detection';
import { coAccessEdge } from '../co-access-graph';
import type { InferenceInput } from './inference-input';
import { modulesOf, signalsOfType } from './rule-helpers';

/**
 * Files A and B accessed within the co-access window in ≥ `causalDependencyMinSessions` (3)
 * sessions → causal_dependency ("touch one, check the other"). Sessions are counted from the
 * project's co-access graph; pairs come from the scratchpad, so a promotion proposes only what
 * this work touched.
 */
export function causalDependencyRule(input: InferenceInput): MemoryCandidate[] {
  const { settings } = input;
  const pairs = groupBy(signalsOfType(input.signals, 'co_access'), (s) =>
    pairKeyOf(s.fileA, s.fileB),
  );
  const candidates: MemoryCandidate[] = [];
  for (const [pairKey, signals] of pairs) {
    const [fileA, fileB] = pairKey.split('\u0000');
    const edge = coAccessEdge(input.stats.coAccess, fileA, fileB, settings);
    const sessions = Math.max(
      edge?.sessionCount ?? 0,
      new Set(signals.map((s) => s.sessionId)).size,
    );
    if (sessions < settings.causalDependencyMinSessions) continue;
    candidates.push({
      key: `causal_dependency:${pairKey}`,
      memoryType: 'causal_dependency',
      naturalKey: pairKey,
      rule: 'causal_dependency',
      signalType: 'co_access',
      source: 'observer_inferred',
      scope: 'module',
      frequency: sessions,
      lastObservedAt: latestAt(signals),
      relatedFiles: [fileA, fileB],
      relatedModules: modulesOf([fileA, fileB], settings.moduleDepth),
      evidence: signalEvidence(signals),
      facts: {
        kind: 'causal_dependency',
        fileA,
        fileB,
        sessionCount: sessions,
        weight: edge?.weight ?? 0,
        direction: edge?.direction ?? 'none',
        avgTimeDeltaMs: edge?.avgTimeDeltaMs ?? 0,
      },
    });
  }
  return candidates;
}
