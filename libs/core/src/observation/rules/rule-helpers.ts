import { moduleOf } from '../project-paths';
import type { SessionSummary } from '../session-summary';
import type { ObserverSignal } from '../signals';
import type { InferenceInput } from './inference-input';

/** The signals of one type, typed. */
export function signalsOfType<T extends ObserverSignal['type']>(
  signals: readonly ObserverSignal[],
  type: T,
): Extract<ObserverSignal, { type: T }>[] {
  return signals.filter((s): s is Extract<ObserverSignal, { type: T }> => s.type === type);
}

export function modulesOf(files: readonly string[], depth: number): string[] {
  return [...new Set(files.map((file) => moduleOf(file, depth)))].sort();
}

/** Modules the scratchpad's file accesses touched: the scope of the module-level rules. */
export function touchedModules(input: InferenceInput): string[] {
  const modules = signalsOfType(input.signals, 'file_access').map((s) => s.module);
  return [...new Set(modules)].sort();
}

/**
 * Sessions that touched a module, newest first, at most `limit`: the recorded summaries, plus
 * scratchpad sessions not summarised yet (their files from file_access signals, no token or
 * step counts), so a promotion right after the work sees the work.
 */
export function sessionsTouching(
  input: InferenceInput,
  module: string,
  limit: number,
): SessionSummary[] {
  const byId = new Map(input.stats.sessions.map((s) => [s.sessionId, s]));
  for (const signal of signalsOfType(input.signals, 'file_access')) {
    if (byId.has(signal.sessionId)) continue;
    byId.set(signal.sessionId, partialSummary(input, signal.sessionId));
  }
  return [...byId.values()]
    .filter((s) => s.modules.includes(module))
    .sort((a, b) => b.endedAt - a.endedAt || (a.sessionId < b.sessionId ? -1 : 1))
    .slice(0, limit);
}

function partialSummary(input: InferenceInput, sessionId: string): SessionSummary {
  const accesses = signalsOfType(input.signals, 'file_access').filter(
    (s) => s.sessionId === sessionId,
  );
  const files = [...new Set(accesses.map((s) => s.filePath))].sort();
  const times = accesses.map((s) => s.at);
  return {
    sessionId,
    startedAt: Math.min(...times),
    endedAt: Math.max(...times),
    succeeded: input.validated ? true : null,
    stepCount: 0,
    plannedSteps: null,
    methodology: null,
    filesAccessed: files,
    filesEdited: [...new Set(accesses.filter((s) => s.access === 'edit').map((s) => s.filePath))],
    modules: [...new Set(accesses.map((s) => s.module))].sort(),
    tokensByModule: {},
    totalTokens: 0,
    sequenceKeys: signalsOfType(input.signals, 'sequence')
      .filter((s) => s.sessionId === sessionId)
      .map((s) => s.sequenceKey),
  };
}

/** Nearest-rank percentile of non-empty values. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1];
}

export function mean(values: readonly number[]): number {
  return values.reduce((sum, v) => sum + v, 0) / values.length;
}
