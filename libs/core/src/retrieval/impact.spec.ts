import { describe, expect, it } from 'vitest';
import { impactDepth, impactScore, isTestFile, propagateImpact } from './impact';
import { InvalidRecallRequestError } from './retrieval-errors';

describe('impact', () => {
  const edges = [
    { from: 'a.ts', to: 'b.ts', weight: 0.8 },
    { from: 'a.ts', to: 'c.ts', weight: 0.2 },
    { from: 'b.ts', to: 'a.ts', weight: 0.8 },
    { from: 'b.ts', to: 'c.ts', weight: 0.5 },
    { from: 'b.ts', to: 'd.test.ts', weight: 0.5 },
    { from: 'd.test.ts', to: 'e.ts', weight: 0.1 },
  ];

  it('should spread along edges, multiplying weights, each file at its first depth', () => {
    expect(propagateImpact('a.ts', edges, 3)).toEqual([
      { path: 'b.ts', depth: 1, weight: 0.8, edgeTypes: ['co_accessed'] },
      { path: 'd.test.ts', depth: 2, weight: 0.4, edgeTypes: ['co_accessed'] },
      { path: 'c.ts', depth: 1, weight: 0.2, edgeTypes: ['co_accessed'] },
    ]); // e.ts: 0.04 is under the 0.1 floor
    expect(propagateImpact('a.ts', edges, 1).map((f) => f.path)).toEqual(['b.ts', 'c.ts']);
  });

  it('should score the chance something is touched, and know test files', () => {
    expect(impactScore(propagateImpact('a.ts', edges, 1))).toBeCloseTo(1 - 0.2 * 0.8, 12);
    expect(impactScore([])).toBe(0);
    for (const path of ['d.test.ts', 'src/__tests__/x.ts', 'tests/x.py', 'pkg/x_test.go']) {
      expect([path, isTestFile(path)]).toEqual([path, true]);
    }
    expect(isTestFile('src/latest.ts')).toBe(false);
  });

  it('should default the depth to 3 and refuse more than 5', () => {
    expect(impactDepth(0)).toBe(3);
    expect(impactDepth(5)).toBe(5);
    expect(() => impactDepth(6)).toThrow(InvalidRecallRequestError);
  });
});
