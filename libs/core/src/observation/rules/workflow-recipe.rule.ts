import { signalEvidence, groupBy, latestAt, type MemoryCandidate } from '../candidates';
import type { SequenceSignal } from '../signals';
import type { InferenceInput } from './inference-input';
import { signalsOfType } from './rule-helpers';

/** Recipes have at least this many steps (seed 002 §7: "the same 4+ step sequence"). */
export const RECIPE_MIN_STEPS = 4;

/**
 * The same 4+ step sequence (tools, in one module's scope) in `recipeMinSessions` (3)+
 * successful sessions within `recipeWindowMs` (30 days) → workflow_recipe. Successful: a
 * recorded session that validated, or a session of this promotion when it is a validated one.
 * A recipe contained in a longer qualifying recipe of the same module with as many sessions is
 * dropped: the longer one says everything it says.
 */
export function workflowRecipeRule(input: InferenceInput): MemoryCandidate[] {
  const since = input.now - input.settings.recipeWindowMs;
  const sequences = signalsOfType(input.signals, 'sequence').filter(
    (s) => s.toolSequence.length >= RECIPE_MIN_STEPS,
  );
  const candidates: MemoryCandidate[] = [];
  for (const [sequenceKey, signals] of groupBy(sequences, (s) => s.sequenceKey)) {
    const sessions = successfulSessions(input, sequenceKey, signals, since);
    if (sessions.size < input.settings.recipeMinSessions) continue;
    const { module, toolSequence } = signals[0];
    const steps = toolSequence.map((tool, i) => ({ tool, file: canonicalFile(signals, i) }));
    const files = [...new Set(steps.flatMap((s) => (s.file === null ? [] : [s.file])))];
    candidates.push({
      key: `workflow_recipe:${sequenceKey}`,
      memoryType: 'workflow_recipe',
      naturalKey: sequenceKey,
      rule: 'workflow_recipe',
      signalType: 'sequence',
      source: 'observer_inferred',
      scope: 'global',
      frequency: sessions.size,
      lastObservedAt: latestAt(signals),
      relatedFiles: files,
      relatedModules: [module],
      evidence: { ...signalEvidence(signals), sessionIds: [...sessions].sort() },
      facts: {
        kind: 'workflow_recipe',
        module,
        toolSequence,
        steps,
        sessionCount: sessions.size,
        lastValidatedAt: latestAt(signals),
      },
    });
  }
  return dropContained(candidates);
}

function successfulSessions(
  input: InferenceInput,
  sequenceKey: string,
  signals: readonly SequenceSignal[],
  since: number,
): Set<string> {
  const sessions = new Set<string>();
  for (const summary of input.stats.sessions) {
    if (summary.succeeded !== true || summary.endedAt < since) continue;
    if (summary.sequenceKeys.includes(sequenceKey)) sessions.add(summary.sessionId);
  }
  if (input.validated) {
    for (const signal of signals) if (signal.at >= since) sessions.add(signal.sessionId);
  }
  return sessions;
}

/** The most frequent file at a step position (alphabetical on a tie), null when none has one. */
function canonicalFile(signals: readonly SequenceSignal[], position: number): string | null {
  const counts = new Map<string, number>();
  for (const signal of signals) {
    const file = signal.files[position];
    if (file !== null && file !== undefined) counts.set(file, (counts.get(file) ?? 0) + 1);
  }
  const ranked = [...counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  return ranked[0]?.[0] ?? null;
}

function dropContained(candidates: MemoryCandidate[]): MemoryCandidate[] {
  return candidates.filter((shorter) => {
    const s = shorter.facts.kind === 'workflow_recipe' ? shorter.facts : null;
    if (s === null) return true;
    return !candidates.some((longer) => {
      const l = longer.facts.kind === 'workflow_recipe' ? longer.facts : null;
      return (
        l !== null &&
        l.module === s.module &&
        l.toolSequence.length > s.toolSequence.length &&
        longer.frequency >= shorter.frequency &&
        containsRun(l.toolSequence, s.toolSequence)
      );
    });
  });
}

function containsRun(haystack: readonly string[], needle: readonly string[]): boolean {
  for (let i = 0; i + needle.length <= haystack.length; i += 1) {
    if (needle.every((tool, j) => haystack[i + j] === tool)) return true;
  }
  return false;
}
