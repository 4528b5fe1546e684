import { describe, expect, it } from 'vitest';
import {
  applyCoCommit,
  coAccessEdge,
  emptyCoAccessAggregate,
  topNeighbours,
  type CoAccessAggregate,
} from './co-access-graph';
import { observerSettings } from './observer-settings';
import { emptyProjectStats } from './project-stats';
import { foldAll, read, runSession, type CallSpec } from './testing/observer-fixtures';

const RULE = observerSettings();

function graphOf(sessions: CallSpec[][]): CoAccessAggregate {
  const stats = emptyProjectStats();
  sessions.forEach((calls, i) => foldAll(stats, runSession(calls, { sessionId: `s${i}` }).signals));
  return stats.coAccess;
}

describe('co-access graph', () => {
  it('should weigh a pair by sessions with both over sessions with either', () => {
    const graph = graphOf([
      [read(0, 'a.ts'), read(1, 'b.ts')],
      [read(0, 'a.ts'), read(2, 'b.ts'), read(3, 'a.ts')],
      [read(0, 'a.ts')],
      [read(0, 'b.ts'), read(9, 'c.ts')],
    ]);
    const edge = coAccessEdge(graph, 'b.ts', 'a.ts', RULE)!;
    // both: s0, s1 (2); either: a in s0,s1,s2 and b in s0,s1,s3 → 4.
    expect(edge).toMatchObject({
      fileA: 'a.ts',
      fileB: 'b.ts',
      sessionCount: 2,
      weight: 0.5,
      rawCount: 3,
    });
    expect(edge.avgTimeDeltaMs).toBeCloseTo((1000 + 2000 + 1000) / 3);
    expect(coAccessEdge(graph, 'b.ts', 'c.ts', RULE)).toBeNull();
  });

  it('should call a pair directional when one order holds at least 80 % of 3+ observations', () => {
    const fourOne = graphOf([
      ...[0, 1, 2, 3].map(() => [read(0, 'a.ts'), read(1, 'b.ts')]),
      [read(0, 'b.ts'), read(1, 'a.ts')],
    ]);
    expect(coAccessEdge(fourOne, 'a.ts', 'b.ts', RULE)).toMatchObject({
      directional: true,
      direction: 'a_to_b',
    });
    const threeTwo = graphOf([
      ...[0, 1, 2].map(() => [read(0, 'a.ts'), read(1, 'b.ts')]),
      ...[0, 1].map(() => [read(0, 'b.ts'), read(1, 'a.ts')]),
    ]);
    expect(coAccessEdge(threeTwo, 'a.ts', 'b.ts', RULE)).toMatchObject({
      directional: false,
      direction: 'none',
    });
    const tooFew = graphOf([
      [read(0, 'b.ts'), read(1, 'a.ts')],
      [read(0, 'b.ts'), read(1, 'a.ts')],
    ]);
    expect(coAccessEdge(tooFew, 'a.ts', 'b.ts', RULE)?.directional).toBe(false);
  });

  it('should list top neighbours by weight, raw count and path, with direction from the file', () => {
    const graph = graphOf([
      [read(0, 'a.ts'), read(1, 'b.ts'), read(2, 'c.ts')],
      [read(0, 'a.ts'), read(1, 'b.ts')],
      [read(0, 'a.ts'), read(1, 'b.ts')],
      [read(0, 'd.ts'), read(1, 'a.ts')],
    ]);
    const neighbours = topNeighbours(graph, 'a.ts', 2, RULE);
    expect(neighbours.map((n) => [n.file, n.weight, n.rawCount, n.direction])).toEqual([
      ['b.ts', 0.75, 3, 'outgoing'],
      ['c.ts', 0.25, 1, 'both'],
    ]);
    expect(topNeighbours(graph, 'b.ts', 1, RULE)[0]).toMatchObject({
      file: 'a.ts',
      direction: 'incoming',
    });
    expect(topNeighbours(graph, 'zzz.ts', 5, RULE)).toEqual([]);
  });

  it('should seed the graph from co-commits, skipping mass commits', () => {
    const graph = emptyCoAccessAggregate();
    expect(applyCoCommit(graph, ['a.ts', 'b.ts', 'a.ts'], 10)).toBe(true);
    expect(applyCoCommit(graph, ['a.ts', 'c.ts'], 20)).toBe(true);
    expect(applyCoCommit(graph, ['a.ts'], 30)).toBe(false);
    expect(
      applyCoCommit(
        graph,
        Array.from({ length: 51 }, (_, i) => `f${i}.ts`),
        40,
      ),
    ).toBe(false);
    expect(coAccessEdge(graph, 'a.ts', 'b.ts', RULE)).toMatchObject({
      weight: 0.5,
      rawCount: 1,
      avgTimeDeltaMs: 0,
      directional: false,
      lastObservedAt: 10,
    });
  });
});
