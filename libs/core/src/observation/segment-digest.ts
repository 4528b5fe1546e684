import { moduleOf } from './project-paths';
import type { ObserverSignal } from './signals';

/**
 * What consolidation needs of a promoted segment (one validated subtask), kept instead of its
 * signals so a 40-subtask scratchpad stays small after incremental promotions.
 */
export interface SegmentDigest {
  /** Edits per file. */
  edits: Record<string, number>;
  errors: Record<string, { toolName: string; normalisedError: string; occurrences: number }>;
  /** Backtracks per file. */
  backtracks: Record<string, number>;
  /** Co-accesses across two modules, keyed `moduleA\u0000moduleB` (sorted). */
  modulePairs: Record<string, number>;
  deadEnds: number;
}

export function digestSignals(
  signals: readonly ObserverSignal[],
  moduleDepth: number,
): SegmentDigest {
  const digest: SegmentDigest = {
    edits: {},
    errors: {},
    backtracks: {},
    modulePairs: {},
    deadEnds: 0,
  };
  for (const signal of signals) {
    switch (signal.type) {
      case 'file_access':
        if (signal.access === 'edit') bump(digest.edits, signal.filePath, 1);
        break;
      case 'error_retry': {
        const error = (digest.errors[signal.errorKey] ??= {
          toolName: signal.toolName,
          normalisedError: signal.normalisedError,
          occurrences: 0,
        });
        error.occurrences += signal.occurrences;
        break;
      }
      case 'backtrack':
        bump(digest.backtracks, signal.filePath, 1);
        break;
      case 'co_access': {
        const a = moduleOf(signal.fileA, moduleDepth);
        const b = moduleOf(signal.fileB, moduleDepth);
        if (a !== b) bump(digest.modulePairs, a < b ? `${a}\u0000${b}` : `${b}\u0000${a}`, 1);
        break;
      }
      case 'dead_end':
        digest.deadEnds += 1;
        break;
      case 'sequence':
      case 'time_anomaly':
      case 'e2e_observation':
        break;
    }
  }
  return digest;
}

function bump(counts: Record<string, number>, key: string, by: number): void {
  counts[key] = (counts[key] ?? 0) + by;
}
