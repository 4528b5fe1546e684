import type { MemoryCandidate } from '../candidates';
import type { InferenceInput } from './inference-input';
import { mean, percentile, sessionsTouching, touchedModules } from './rule-helpers';

/**
 * Tokens spent per session on a module, over its last `moduleWindowSessions` (30) sessions with
 * token data → context_cost (average and nearest-rank p90), once there are
 * `contextCostMinSessions` (3) samples. A call's tokens count towards the modules of its files.
 */
export function contextCostRule(input: InferenceInput): MemoryCandidate[] {
  const { settings } = input;
  const candidates: MemoryCandidate[] = [];
  for (const module of touchedModules(input)) {
    const samples = sessionsTouching(input, module, Number.MAX_SAFE_INTEGER)
      .filter((s) => (s.tokensByModule[module] ?? 0) > 0)
      .slice(0, settings.moduleWindowSessions);
    if (samples.length < settings.contextCostMinSessions) continue;
    const tokens = samples.map((s) => s.tokensByModule[module]);
    const averageTokens = Math.round(mean(tokens));
    const p90Tokens = Math.round(percentile(tokens, 90));
    candidates.push({
      key: `context_cost:${module}`,
      memoryType: 'context_cost',
      naturalKey: module,
      rule: 'context_cost',
      signalType: 'session_stats',
      source: 'observer_inferred',
      scope: 'module',
      frequency: samples.length,
      lastObservedAt: Math.max(...samples.map((s) => s.endedAt)),
      relatedFiles: [],
      relatedModules: [module],
      evidence: {
        sessionIds: samples.map((s) => s.sessionId).sort(),
        eventIds: [],
        latest: { sessionId: samples[0].sessionId, promptId: null, at: samples[0].endedAt },
      },
      facts: {
        kind: 'context_cost',
        module,
        averageTokens,
        p90Tokens,
        sampleCount: samples.length,
      },
    });
  }
  return candidates;
}
