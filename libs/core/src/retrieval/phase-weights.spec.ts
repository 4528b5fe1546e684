import type { MemoryType } from '@engram/contracts';
import { describe, expect, it } from 'vitest';
import { PHASE_WEIGHTS, phaseWeight } from './phase-weights';
import { UNIVERSAL_PHASES, type UniversalPhase } from './universal-phase';

// Seed 002 §7 transcribed by hand as a matrix; '-' marks an entry the seed leaves out (→ 1.0).
const TYPES: readonly MemoryType[] = [
  'requirement',
  'decision',
  'workflow_recipe',
  'task_calibration',
  'pattern',
  'work_state',
  'preference',
  'module_insight',
  'gotcha',
  'error_pattern',
  'causal_dependency',
  'dead_end',
  'e2e_observation',
  'prefetch_pattern',
  'work_unit_outcome',
  'context_cost',
];
//                  req  dec  rec  cal  pat  ws   pref mod  got  err  cau  dead e2e  pre  out  cost
const SEED: Record<UniversalPhase, string> = {
  define: /*   */ '1.5  1.3  1.5  1.4  1.2  1.1  1.0  1.0  0.8  0.7  0.9  1.2  0.6  0.5  1.0  1.3',
  implement: /**/ '0.8  0.7  1.4  0.5  1.2  1.0  0.9  1.2  1.5  1.3  1.3  1.3  0.7  1.1  0.9  0.4',
  validate: /* */ '1.4  1.1  0.6  0.8  -    0.5  -    0.9  1.2  1.5  1.0  0.8  1.5  0.3  1.1  0.3',
  refine: /*   */ '0.7  1.0  1.0  -    1.4  0.9  -    1.1  1.2  1.3  1.1  1.4  0.8  -    0.8  0.4',
  explore: /*  */ '1.0  1.4  1.1  0.6  1.2  -    1.0  1.3  0.8  0.7  1.1  0.9  0.9  -    1.0  0.5',
  reflect: /*  */ '-    1.2  0.6  1.4  -    0.7  -    1.1  0.8  1.2  -    1.3  1.0  0.4  1.5  1.3',
};

function row(phase: UniversalPhase): (number | null)[] {
  return SEED[phase]
    .trim()
    .split(/\s+/)
    .map((cell) => (cell === '-' ? null : Number(cell)));
}

describe('PHASE_WEIGHTS', () => {
  it.each(UNIVERSAL_PHASES)(
    'should hold the seed 002 row for %s, missing entries as 1.0',
    (phase) => {
      const expected = row(phase);
      expect(expected).toHaveLength(TYPES.length);
      TYPES.forEach((type, index) => {
        expect(phaseWeight(PHASE_WEIGHTS, phase, type), `${phase}.${type}`).toBe(
          expected[index] ?? 1.0,
        );
      });
    },
  );

  it.each(UNIVERSAL_PHASES)('should list exactly the entries the seed lists for %s', (phase) => {
    const listed = TYPES.filter((_, index) => row(phase)[index] !== null).sort();
    expect(Object.keys(PHASE_WEIGHTS[phase]).sort()).toEqual(listed);
  });

  it('should weigh documents without a memory type (episodes, turns) neutrally', () => {
    expect(phaseWeight(PHASE_WEIGHTS, 'implement', null)).toBe(1);
    expect(phaseWeight(PHASE_WEIGHTS, 'validate', 'pattern', 0.9)).toBe(0.9);
  });

  it('should be frozen so no caller can reorder every recall by accident', () => {
    expect(Object.isFrozen(PHASE_WEIGHTS)).toBe(true);
    expect(Object.isFrozen(PHASE_WEIGHTS.implement)).toBe(true);
  });
});
