import { describe, expect, it } from 'vitest';
import { benchTruth, formatTruthBench } from './bench-truth';
import {
  baselineOutcome,
  meetsTargets,
  scoreTruth,
  unmetTargets,
  type ProjectOutcome,
} from './bench-truth-score';
import { FACT_KINDS, isCommit, outdatedKeys, truthWorld } from './bench-truth-world';

const NOW = Date.UTC(2026, 10, 27, 8);

describe('truthWorld', () => {
  it('should give the same projects for the same seed and others for another', () => {
    expect(truthWorld(7, 3, NOW)).toEqual(truthWorld(7, 3, NOW));
    expect(truthWorld(8, 3, NOW)).not.toEqual(truthWorld(7, 3, NOW));
  });

  it('should ask about every kind of change, each answer a note taught, old facts first', () => {
    for (const project of truthWorld(3, 10, NOW)) {
      const notes = [...project.before, ...project.changes.filter((c) => !isCommit(c))];
      const keys = new Set(notes.map((n) => n.key));
      expect(new Set(project.queries.map((q) => q.kind))).toEqual(new Set(FACT_KINDS));
      for (const query of project.queries) {
        expect(keys.has(query.current)).toBe(true);
        for (const key of query.outdated) expect(keys.has(key)).toBe(true);
      }
      const lastBefore = Math.max(...project.before.map((n) => n.at));
      expect(Math.min(...project.changes.map((c) => c.at))).toBeGreaterThan(lastBefore);
      expect(outdatedKeys(project)).toEqual(
        new Set(['deleted', 'decision-old', 'dependency-old', 'convention-old', 'gotcha-old']),
      );
    }
  });
});

describe('scoreTruth', () => {
  const [project] = truthWorld(1, 1, NOW);
  const outcome = (ranked: (q: (typeof project.queries)[number]) => string[]): ProjectOutcome => ({
    project,
    queries: project.queries.map((query) => ({
      query,
      ranked: ranked(query).map((key) => ({ key, marked: key === 'deleted' })),
      context: ranked(query).slice(0, 1),
    })),
    files: project.files.map((file) => ({ file, injected: file.outdated })),
  });

  it('should count the current fact first, outdated results and injected outdated notes', () => {
    const scores = scoreTruth([outcome((q) => [q.current, ...q.outdated])]);
    expect(scores.top1).toBe(1);
    // 8 questions, 13 results: 5 outdated, of which 'deleted' was shown marked.
    expect(scores.resultsInTop5).toBe(13);
    expect(scores.staleInTop5).toBeCloseTo(5 / 13);
    expect(scores.unmarkedStaleInTop5).toBeCloseTo(4 / 13);
    expect(scores.staleAboveCurrent).toBe(0);
    expect(scores.injectedStaleForFile).toBe(3);
    expect(scores.injectedStaleInContext).toBe(0);
    expect(scores.shownAsHistory).toBe(0);
    expect(meetsTargets(scores)).toBe(false);
    expect(unmetTargets(scores)).toEqual(['stale in top-5', 'injected stale']);
  });

  it('should miss top-1 when the outdated fact comes first', () => {
    const scores = scoreTruth([outcome((q) => [...q.outdated, q.current])]);
    expect(scores.top1).toBeCloseTo(3 / 8);
    expect(scores.staleAboveCurrent).toBe(5);
    expect(scores.byKind.decision_reversed.top1).toBe(0);
    expect(scores.byKind.compatible_addition.top1).toBe(1);
    expect(scores.injectedStaleInContext).toBe(5);
  });

  it('should count outdated notes folded under a result as history, not as results', () => {
    const folded: ProjectOutcome = {
      project,
      queries: project.queries.map((query) => ({
        query,
        ranked: [{ key: query.current, marked: false, history: query.outdated }],
        context: [],
      })),
      files: [],
    };
    const scores = scoreTruth([folded]);
    expect(scores.staleInTop5).toBe(0);
    expect(scores.shownAsHistory).toBe(5);
    expect(scores.historyUnderCurrent).toBe(5);
    // Under another result than the current fact: history all the same, not under the current.
    const elsewhere = scoreTruth([
      {
        ...folded,
        queries: folded.queries.map((q) => ({
          ...q,
          ranked: [{ key: 'other', marked: false, history: q.query.outdated }],
        })),
      },
    ]);
    expect(elsewhere.shownAsHistory).toBe(5);
    expect(elsewhere.historyUnderCurrent).toBe(0);
  });

  it('should inject the outdated notes in the baseline, which knows no change', () => {
    const scores = scoreTruth([baselineOutcome(project, 5)]);
    expect(scores.injectedStaleForFile).toBe(3);
  });
});

describe('benchTruth', () => {
  it('should beat the baseline on embedded Engram and inject nothing outdated', async () => {
    const result = await benchTruth({ projects: 3, seed: 5 });
    expect(result.questions).toBe(24);
    expect(result.engram.top1).toBeGreaterThan(result.baseline.top1);
    expect(result.engram.injectedStaleForFile).toBe(0);
    // Outdated memories an explicit search shows are never above the current fact.
    expect(result.engram.staleAboveCurrent).toBe(0);
    // They are shown as the history of the current fact, taking no result slot.
    expect(result.engram.historyUnderCurrent).toBeGreaterThan(0);
    expect(result.engram.staleInTop5).toBeLessThanOrEqual(0.02);
    expect(result.baseline.injectedStaleForFile).toBe(9);
    expect(formatTruthBench(result)).toContain('baseline: plain BM25');
    expect(formatTruthBench(result)).toContain('outdated above the current fact: 0');
  }, 60_000);
});
