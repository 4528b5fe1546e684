import { signalEvidence, latestAt, type MemoryCandidate } from '../candidates';
import type { InferenceInput } from './inference-input';
import { sessionsTouching, signalsOfType, touchedModules } from './rule-helpers';

const MAX_FILES = 10;

/**
 * Files accessed in > `prefetchAlwaysShare` (80 %) of the sessions touching a module are
 * "always" read, in > `prefetchFrequentShare` (50 %) "frequently" → prefetch_pattern, once the
 * module has `prefetchMinSessions` (3) sessions. Strict inequalities, as the seed writes them:
 * exactly 80 % is "frequently", exactly 50 % is neither.
 */
export function prefetchPatternRule(input: InferenceInput): MemoryCandidate[] {
  const { settings } = input;
  const candidates: MemoryCandidate[] = [];
  for (const module of touchedModules(input)) {
    const sessions = sessionsTouching(input, module, settings.moduleWindowSessions);
    if (sessions.length < settings.prefetchMinSessions) continue;
    const shares = fileShares(sessions.map((s) => s.filesAccessed));
    const always = shares.filter(([, share]) => share > settings.prefetchAlwaysShare);
    const frequently = shares.filter(
      ([, share]) =>
        share > settings.prefetchFrequentShare && share <= settings.prefetchAlwaysShare,
    );
    if (always.length === 0 && frequently.length === 0) continue;
    const alwaysReadFiles = always.slice(0, MAX_FILES).map(([file]) => file);
    const frequentlyReadFiles = frequently.slice(0, MAX_FILES).map(([file]) => file);
    const signals = signalsOfType(input.signals, 'file_access').filter((s) => s.module === module);
    candidates.push({
      key: `prefetch_pattern:${module}`,
      memoryType: 'prefetch_pattern',
      naturalKey: module,
      rule: 'prefetch_pattern',
      signalType: 'file_access',
      source: 'observer_inferred',
      scope: 'module',
      frequency: sessions.length,
      lastObservedAt: Math.max(latestAt(signals), ...sessions.map((s) => s.endedAt)),
      relatedFiles: [...alwaysReadFiles, ...frequentlyReadFiles],
      relatedModules: [module],
      evidence: { ...signalEvidence(signals), sessionIds: sessions.map((s) => s.sessionId).sort() },
      facts: {
        kind: 'prefetch_pattern',
        module,
        alwaysReadFiles,
        frequentlyReadFiles,
        sessionCount: sessions.length,
      },
    });
  }
  return candidates;
}

/** Each file's share of the sessions, highest first, then by path. */
function fileShares(sessionFiles: readonly string[][]): Array<[string, number]> {
  const counts = new Map<string, number>();
  for (const files of sessionFiles) {
    for (const file of new Set(files)) counts.set(file, (counts.get(file) ?? 0) + 1);
  }
  return [...counts.entries()]
    .map(([file, count]): [string, number] => [file, count / sessionFiles.length])
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
}
