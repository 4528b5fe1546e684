import { MAX_SEQUENCE_KEYS, pushBounded, type DetectorState } from './detector-state';
import { signalBase, signalIdOf, type CallContext } from './observed-call';
import type { SequenceSignal } from './signals';

/**
 * sequence: the tool n-grams (`sequenceLengths`) ending at each successful call, scoped to the
 * module most of their files are in. Only n-grams of distinct steps (no tool-and-file repeated)
 * with at least one file qualify — "Read, Read, Read, Read" is not a recipe. Each (module,
 * tools) key is emitted once per session: the recipe rule counts sessions, not repetitions.
 * Failed calls are left out, so a retried failure does not split a recipe.
 */
export function detectSequences(state: DetectorState, context: CallContext): SequenceSignal[] {
  const { call } = context;
  const file = context.files[0] ?? null;
  const module = file === null ? null : (state.files[file]?.module ?? null);
  const longest = Math.max(...context.settings.sequenceLengths);
  pushBounded(
    state.sequenceSteps,
    { tool: call.toolName, file, module, step: call.stepIndex, eventId: call.eventId },
    longest,
  );
  const signals: SequenceSignal[] = [];
  for (const length of [...context.settings.sequenceLengths].sort((a, b) => a - b)) {
    if (state.sequenceSteps.length < length) continue;
    const steps = state.sequenceSteps.slice(-length);
    const distinct = new Set(steps.map((step) => `${step.tool}\u0000${step.file ?? ''}`));
    const scope = dominantModule(steps.map((step) => step.module));
    if (distinct.size < length || scope === null) continue;
    const toolSequence = steps.map((step) => step.tool);
    const sequenceKey = `${scope}|${toolSequence.join('>')}`;
    if (state.sequenceKeysSeen.includes(sequenceKey)) continue;
    pushBounded(state.sequenceKeysSeen, sequenceKey, MAX_SEQUENCE_KEYS);
    signals.push({
      ...signalBase(
        context,
        signalIdOf(context, 'sequence', sequenceKey),
        steps.map((step) => step.eventId),
      ),
      type: 'sequence',
      sequenceKey,
      toolSequence,
      files: steps.map((step) => step.file),
      module: scope,
    });
  }
  return signals;
}

/** The most frequent module (earliest on a tie), or null when no step touched a file. */
function dominantModule(modules: readonly (string | null)[]): string | null {
  const counts = new Map<string, number>();
  for (const module of modules) {
    if (module !== null) counts.set(module, (counts.get(module) ?? 0) + 1);
  }
  let best: string | null = null;
  for (const [module, count] of counts) {
    if (best === null || count > counts.get(best)!) best = module;
  }
  return best;
}
