import type { Memory, RelationType } from '@engram/contracts';
import { describe, expect, it } from 'vitest';
import { memory } from '../retrieval/testing/fixtures';
import {
  loadRelatedMemories,
  mayPropagate,
  PROPAGATION_MEMORIES,
  propagateConfidence,
  propagateConfidenceChanges,
  propagatedVersions,
  type PropagationMemory,
} from './confidence-propagation';

type Edge = [RelationType, string, number?];

function node(memoryId: string, confidence: number, ...edges: Edge[]): PropagationMemory {
  return {
    memoryId,
    confidence,
    relations: edges.map(([relationType, targetMemoryId, relationConfidence = 1]) => ({
      relationType,
      targetMemoryId,
      targetFilePath: null,
      confidence: relationConfidence,
      autoExtracted: true,
    })),
  };
}

/** The moves from `origin` (now at its confidence, before at `before`) over `graph`. */
function moves(origin: PropagationMemory, before: number, graph: PropagationMemory[]) {
  const byId = new Map(graph.map((m) => [m.memoryId, m]));
  return propagateConfidence(origin, before, (id) => byId.get(id)).map((m) => [
    m.memoryId,
    Number(m.after.toFixed(4)),
  ]);
}

describe('propagateConfidence', () => {
  it("should move each related memory by the seed's coefficient times the change, hop by hop", () => {
    // Confirmed: 0.5 → 0.9. B gets 0.6 · 0.4, C (derived from B) 0.5 of B's 0.24; D would get
    // 0.3 · 0.12 = 0.036, below 0.05: it stays, and so does everything past it.
    const a = node('a', 0.9, ['validates', 'b']);
    const graph = [
      node('b', 0.5, ['derived_from', 'c']),
      node('c', 0.6, ['required_with', 'd']),
      node('d', 0.5, ['validates', 'e']),
      node('e', 0.5),
    ];
    expect(moves(a, 0.5, graph)).toEqual([
      ['b', 0.74],
      ['c', 0.72],
    ]);
  });

  it('should move conflicting memories the other way, and scale by the relation confidence', () => {
    const a = node('a', 0.4, ['conflicts_with', 'b'], ['supersedes', 'c', 0.5]);
    // Flagged wrong: 0.8 → 0.4 (Δ −0.4): the conflicting one gains 0.16, the superseded one
    // loses 0.8 · 0.5 · 0.4 = 0.16.
    expect(moves(a, 0.8, [node('b', 0.5), node('c', 0.7)])).toEqual([
      ['b', 0.66],
      ['c', 0.54],
    ]);
  });

  it('should clamp to [0, 1] and stop where the clamp leaves less than 0.05', () => {
    const a = node('a', 1, ['validates', 'full'], ['validates', 'high'], ['conflicts_with', 'low']);
    const graph = [node('full', 0.98, ['validates', 'x']), node('high', 0.9), node('low', 0.1)];
    expect(moves(a, 0.5, graph)).toEqual([
      ['high', 1],
      ['low', 0],
    ]);
  });

  it('should be cycle-safe: the memory that changed never moves, each other once', () => {
    const a = node('a', 0.9, ['validates', 'b'], ['validates', 'c']);
    const graph = [
      node('b', 0.5, ['validates', 'a'], ['validates', 'd']),
      node('c', 0.5, ['validates', 'd'], ['validates', 'b']),
      node('d', 0.5, ['validates', 'a'], ['validates', 'b']),
    ];
    const byId = new Map(graph.map((m) => [m.memoryId, m]));
    const moved = propagateConfidence(a, 0.5, (id) => byId.get(id));
    expect(moved.map((m) => [m.memoryId, m.from])).toEqual([
      ['b', 'a'],
      ['c', 'a'],
      ['d', 'b'], // nearest path first, the first relation on ties
    ]);
    expect(moved[2].after).toBeCloseTo(0.5 + 0.6 * 0.24, 10);
  });

  it('should skip file relations, memories not loaded, and changes below the threshold', () => {
    const a = node('a', 0.55, ['validates', 'missing'], ['validates', 'b']);
    a.relations.push({
      relationType: 'required_with',
      targetMemoryId: null,
      targetFilePath: 'src/a.ts',
      confidence: 1,
      autoExtracted: true,
    });
    // Δ 0.05 · 0.6 = 0.03 < 0.05; a change of exactly 0.05 does count.
    expect(moves(a, 0.5, [node('b', 0.5)])).toEqual([]);
    expect(moves(node('a', 0.6, ['supersedes', 'b', 0.625]), 0.5, [node('b', 0.5)])).toEqual([
      ['b', 0.55],
    ]);
  });
});

describe('propagatedVersions', () => {
  it('should write next versions with the new confidence, deterministically, citing the cause', () => {
    const b: Memory = memory({ memoryId: 'b', confidence: 0.5, sourceEventIds: ['e-1'] });
    const cause = { eventId: 'feedback-1', timestamp: b.timestamp + 1 };
    const moved = [
      { memoryId: 'b', before: 0.5, after: 0.74, from: 'a', relationType: 'validates' as const },
    ];
    const [next] = propagatedVersions(moved, new Map([['b', b]]), cause);
    expect(next).toMatchObject({ memoryId: 'b', confidence: 0.74, timestamp: cause.timestamp });
    expect(next.sourceEventIds).toEqual(['e-1', 'feedback-1']);
    expect(next.eventId).not.toBe(b.eventId);
    expect(propagatedVersions(moved, new Map([['b', b]]), cause)[0].eventId).toBe(next.eventId);
    expect(propagatedVersions(moved, new Map(), cause)).toEqual([]);
  });
});

/** A stored memory with `node`'s relations. */
function stored(memoryId: string, confidence: number, ...edges: Edge[]): Memory {
  return memory({
    memoryId,
    confidence,
    relations: node(memoryId, confidence, ...edges).relations,
  });
}

describe('loadRelatedMemories', () => {
  it('should load hop by hop what the relations name, each once, the origins included', async () => {
    const graph = new Map(
      [
        stored('b', 0.5, ['validates', 'c'], ['validates', 'a']),
        stored('c', 0.5, ['derived_from', 'b']),
      ].map((m) => [m.memoryId, m]),
    );
    const asked: string[][] = [];
    const loaded = await loadRelatedMemories(
      [stored('a', 0.9, ['validates', 'b'], ['validates', 'gone'])],
      (ids) => {
        asked.push(ids);
        return Promise.resolve(ids.flatMap((id) => graph.get(id) ?? []));
      },
    );
    expect([...loaded.keys()]).toEqual(['a', 'b', 'c']);
    expect(asked).toEqual([['b', 'gone'], ['c']]);
  });

  it('should stop at PROPAGATION_MEMORIES memories', async () => {
    const fan = Array.from({ length: PROPAGATION_MEMORIES + 50 }, (_, i): Edge => [
      'validates',
      `m${i}`,
    ]);
    const loaded = await loadRelatedMemories([stored('a', 0.9, ...fan)], (ids) =>
      Promise.resolve(ids.map((id) => stored(id, 0.5))),
    );
    expect(loaded.size).toBe(PROPAGATION_MEMORIES);
  });
});

describe('propagateConfidenceChanges', () => {
  it('should apply each change from the versions the ones before it wrote, latest per memory', () => {
    // a: 0.5 → 0.9 moves b by 0.24; c: 0.5 → 0.3 then moves b (now 0.74) by 0.6 · −0.2.
    const a = stored('a', 0.9, ['validates', 'b']);
    const c = stored('c', 0.3, ['validates', 'b']);
    const b = stored('b', 0.5);
    const written = propagateConfidenceChanges(
      [
        { memory: a, before: 0.5 },
        { memory: c, before: 0.5 },
      ],
      new Map([['b', b]]),
    );
    expect(written.map((m) => [m.memoryId, Number(m.confidence.toFixed(4))])).toEqual([
      ['b', 0.62],
    ]);
    expect(written[0].sourceEventIds).toEqual(expect.arrayContaining([a.eventId, c.eventId]));
  });

  it('should see the other changed memories at their new confidence, and skip unchanged ones', () => {
    // a and b both changed in the write; b validates a: a moves from its new 0.9, not 0.5.
    const a = stored('a', 0.9);
    const b = stored('b', 0.8, ['validates', 'a']);
    const written = propagateConfidenceChanges(
      [
        { memory: a, before: 0.9 },
        { memory: b, before: 0.4 },
      ],
      new Map([['a', stored('a', 0.5)]]),
    );
    expect(written.map((m) => [m.memoryId, Number(m.confidence.toFixed(4))])).toEqual([['a', 1]]);
  });
});

describe('mayPropagate', () => {
  it('should say a change can move a related memory only when the largest coefficient times it reaches 0.05', () => {
    // 0.8 (supersedes) is the largest coefficient: 0.0625 is the smallest change that can move.
    expect(mayPropagate(0.6, 0.67)).toBe(true);
    expect(mayPropagate(0.6, 0.66)).toBe(false);
    expect(mayPropagate(0.8, 0.73)).toBe(true);
    expect(mayPropagate(0.8, 0.74)).toBe(false);
    expect(mayPropagate(0.8, 0.8)).toBe(false);
    // Unknown before (a record written before it was kept): it may.
    expect(mayPropagate(undefined, 0.8)).toBe(true);
  });
});
