import { MEMORY_TYPES } from '@engram/contracts';
import { describe, expect, it } from 'vitest';
import { DISTILLED_HALF_LIFE_DAYS } from '../distillation/memory-types';
import { effectiveHalfLifeDays, MEMORY_TYPE_HALF_LIFE_DAYS } from './half-life';

describe('memory half-lives', () => {
  it("should give seed 002's defaults by type and the distiller's for the types it writes", () => {
    expect(MEMORY_TYPE_HALF_LIFE_DAYS.work_state).toBe(7);
    expect(MEMORY_TYPE_HALF_LIFE_DAYS.dead_end).toBe(90);
    expect(MEMORY_TYPE_HALF_LIFE_DAYS.decision).toBeNull();
    expect(MEMORY_TYPE_HALF_LIFE_DAYS.preference).toBeNull();
    for (const [type, days] of Object.entries(DISTILLED_HALF_LIFE_DAYS)) {
      expect(MEMORY_TYPE_HALF_LIFE_DAYS[type as keyof typeof DISTILLED_HALF_LIFE_DAYS]).toBe(days);
    }
    expect(Object.keys(MEMORY_TYPE_HALF_LIFE_DAYS).sort()).toEqual([...MEMORY_TYPES].sort());
  });

  it("should prefer a memory's own half-life and fall back to its type's", () => {
    expect(effectiveHalfLifeDays({ memoryType: 'work_state', decayHalfLifeDays: null })).toBe(7);
    expect(effectiveHalfLifeDays({ memoryType: 'work_state', decayHalfLifeDays: 2 })).toBe(2);
    expect(effectiveHalfLifeDays({ memoryType: 'decision', decayHalfLifeDays: 14 })).toBe(14);
    expect(effectiveHalfLifeDays({ memoryType: 'decision', decayHalfLifeDays: null })).toBeNull();
  });

  it('should ignore a half-life that cannot be one (corrupt document)', () => {
    for (const bad of [0, -3, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(effectiveHalfLifeDays({ memoryType: 'gotcha', decayHalfLifeDays: bad })).toBe(90);
      expect(effectiveHalfLifeDays({ memoryType: 'decision', decayHalfLifeDays: bad })).toBeNull();
    }
  });
});
