import { describe, expect, it } from 'vitest';
import type { GraphSessionPairRow } from './observer-graph';
import {
  applyPairFacts,
  decodePairFacts,
  encodePairFacts,
  pairKey,
  type StoredPairFacts,
} from './session-pair-facts';

function row(sessionId: string, rawCount: number, fileB = 'b.ts'): GraphSessionPairRow {
  return {
    tenantId: 't',
    projectId: 'p',
    sessionId,
    fileA: 'a.ts',
    fileB,
    rawCount,
    timeDeltaSumMs: rawCount * 1000,
    timedCount: rawCount,
    aThenB: rawCount,
    bThenA: 0,
    sameStep: 0,
    lastObservedAt: 100 + rawCount,
  };
}

describe('applyPairFacts', () => {
  it("should give a new session's fact whole, as one more session of the pair", () => {
    const { facts, deltas } = applyPairFacts(new Map(), [row('s1', 2)]);
    expect(deltas).toEqual([
      {
        tenantId: 't',
        projectId: 'p',
        fileA: 'a.ts',
        fileB: 'b.ts',
        newSessions: 1,
        counters: {
          rawCount: 2,
          timeDeltaSumMs: 2000,
          timedCount: 2,
          aThenB: 2,
          bThenA: 0,
          sameStep: 0,
        },
        lastObservedAt: 102,
      },
    ]);
    expect(facts.get('s1')).toEqual({ [pairKey('a.ts', 'b.ts')]: [2, 2000, 2, 2, 0, 0, 102] });
  });

  it('should move nothing when the same rows are written again (a replay)', () => {
    const first = applyPairFacts(new Map(), [row('s1', 2), row('s2', 1)]);
    const again = applyPairFacts(first.facts, [row('s1', 2), row('s2', 1)]);
    expect(again.deltas).toEqual([]);
    expect(again.facts).toEqual(first.facts);
  });

  it('should add only the growth of a fact, and never roll back for a stale row', () => {
    const first = applyPairFacts(new Map(), [row('s1', 2)]);
    const grown = applyPairFacts(first.facts, [row('s1', 5)]);
    expect(grown.deltas.map((d) => [d.newSessions, d.counters.rawCount])).toEqual([[0, 3]]);
    const stale = applyPairFacts(grown.facts, [row('s1', 3)]);
    expect(stale.deltas).toEqual([]);
    expect(stale.facts.get('s1')![pairKey('a.ts', 'b.ts')][0]).toBe(5);
  });

  it("should sum a batch's sessions per edge: one row per CO_ACCESSED edge", () => {
    const { deltas } = applyPairFacts(new Map(), [
      row('s1', 2),
      row('s2', 3),
      row('s2', 1, 'c.ts'),
    ]);
    expect(deltas.map((d) => [d.fileB, d.newSessions, d.counters.rawCount])).toEqual([
      ['b.ts', 2, 5],
      ['c.ts', 1, 1],
    ]);
  });
});

describe('stored pair facts', () => {
  it('should serialise the same facts to the same string whatever the order they grew in', () => {
    const one = applyPairFacts(new Map(), [row('s', 1, 'c.ts'), row('s', 1, 'b.ts')]);
    const other = applyPairFacts(new Map(), [row('s', 1, 'b.ts'), row('s', 1, 'c.ts')]);
    expect(encodePairFacts(one.facts.get('s')!)).toBe(encodePairFacts(other.facts.get('s')!));
  });

  it('should read back what it wrote, and nothing for a session without facts', () => {
    const facts: StoredPairFacts = { [pairKey('a', 'b')]: [1, 2, 3, 4, 5, 6, 7] };
    expect(decodePairFacts(encodePairFacts(facts))).toEqual(facts);
    expect(decodePairFacts(null)).toEqual({});
  });
});
