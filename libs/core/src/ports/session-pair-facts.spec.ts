import { describe, expect, it } from 'vitest';
import type { GraphSessionPairRow } from './observer-graph';
import {
  applyPairFacts,
  applyStoredPairFacts,
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

  it('should read the first, keyed form that older graphs hold', () => {
    const first = JSON.stringify({ [pairKey('a', 'b')]: [1, 2, 3, 4, 5, 6, 7] });
    expect(decodePairFacts(first)).toEqual({ [pairKey('a', 'b')]: [1, 2, 3, 4, 5, 6, 7] });
  });

  it('should keep each path once, and times relative to the earliest', () => {
    const { facts } = applyPairFacts(new Map(), [row('s', 1, 'b.ts'), row('s', 2, 'c.ts')]);
    expect(JSON.parse(encodePairFacts(facts.get('s')!))).toEqual({
      v: 2,
      files: ['a.ts', 'b.ts', 'c.ts'],
      t: 101,
      pairs: [
        [0, 1, 1, 1000, 1, 1, 0, 0, 0],
        [0, 2, 2, 2000, 2, 2, 0, 0, 1],
      ],
    });
  });
});

describe('applyStoredPairFacts', () => {
  const rows = (sessionId: string, n: number) => [
    row(sessionId, n, 'c.ts'),
    { ...row(sessionId, n, 'b.ts'), fileA: '0.ts' },
    row(sessionId, n + 1, 'b.ts'),
  ];

  it('should give the strings and deltas of decode, applyPairFacts and encode', () => {
    let stored = new Map<string, string>();
    let records = new Map<string, StoredPairFacts>();
    for (const batch of [rows('s1', 1), [...rows('s1', 2), ...rows('s2', 1)], rows('s2', 3)]) {
      const fast = applyStoredPairFacts(stored, batch);
      const slow = applyPairFacts(records, batch);
      expect(fast.deltas).toEqual(slow.deltas);
      for (const [id, facts] of slow.facts) expect(fast.facts.get(id)).toBe(encodePairFacts(facts));
      stored = new Map([...stored, ...fast.facts]);
      records = new Map([...records, ...slow.facts]);
    }
  });

  it('should return no facts for sessions nothing moved (a replay writes nothing)', () => {
    const first = applyStoredPairFacts(new Map(), rows('s1', 2));
    const again = applyStoredPairFacts(first.facts, [...rows('s1', 2), row('s1', 1)]);
    expect(again).toEqual({ facts: new Map(), deltas: [] });
  });

  it('should move facts stored in the first form, and write them in the compact one', () => {
    const stored = JSON.stringify({ [pairKey('a.ts', 'b.ts')]: [2, 2000, 2, 2, 0, 0, 102] });
    const { facts, deltas } = applyStoredPairFacts(new Map([['s1', stored]]), [row('s1', 3)]);
    expect(deltas.map((d) => [d.newSessions, d.counters.rawCount])).toEqual([[0, 1]]);
    expect(decodePairFacts(facts.get('s1'))).toEqual({
      [pairKey('a.ts', 'b.ts')]: [3, 3000, 3, 3, 0, 0, 103],
    });
  });
});
