/**
 * Truth over time (issue #20) in `npm run bench:quality`: `engram bench truth` — generated
 * projects where files are renamed and deleted, decisions reversed, dependencies swapped and
 * conventions replaced, on embedded Engram in process — beside its baseline (plain BM25 over every
 * note ever taught). Seed 1; 20 projects (`--quick`: 5).
 */
import { benchTruth } from '../../../apps/engram/src/commands/bench-truth';
import type { TruthScores } from '../../../apps/engram/src/commands/bench-truth-score';
import type { QualityRow, QualityRunner } from './types';

export const runTruthQuality: QualityRunner = async (options) => {
  const projects = options.quick ? 5 : 20;
  const result = await benchTruth({ projects, seed: 1, log: options.log });
  const row = (method: string, baseline: boolean, scores: TruthScores): QualityRow => ({
    area: 'truth',
    dataset: `generated/${projects} projects, seed 1`,
    method,
    baseline,
    metrics: {
      'top-1': scores.top1,
      'stale@5': scores.staleInTop5,
      'unmarked stale@5': scores.unmarkedStaleInTop5,
      // Outdated memories shown as the history of the current fact (`replaces`), not as results.
      'shown as history': scores.shownAsHistory,
      'injected stale': scores.injectedStaleForFile + scores.injectedStaleInContext,
    },
  });
  return {
    area: 'truth',
    rows: [
      row('engram default', false, result.engram),
      row('baseline: plain BM25', true, result.baseline),
    ],
    notes: [
      `${result.questions} questions in ${result.seconds} s; targets top-1 ≥ ${result.targets.top1}, ` +
        `stale@5 ≤ ${result.targets.staleInTop5}, injected stale = ${result.targets.injectedStale}: ` +
        (result.targetsMet ? 'met' : 'not all met'),
    ],
  };
};
