import { describe, expect, it } from 'vitest';
import { normaliseErrorMessage } from '../observation/error-normalisation';
import { intentKeywords } from '../segmentation/intent-keywords';
import { ADVERSARIAL_SHAPES, EVENT_TEXT_FUNCTIONS } from './adversarial-text';

// Issue #19, finding 2: one ToolCallObserved with a 5 MB errorMessage froze the embedded process
// (normaliseErrorMessage was quadratic; so was intentKeywords on one long token). Every core
// function that runs regular expressions over event text must do work linear in its input (or
// cap it): checked by scaling, time(4n) / time(n) < 8 where quadratic work gives 16, not by a
// wall-clock budget. Figures: test/bench/poison-pill-bench.sh.

/** The fastest of three runs (ms): the least disturbed by GC and the other tests. */
function fastest(fn: (text: string) => unknown, text: string): number {
  let best = Infinity;
  for (let i = 0; i < 3; i += 1) {
    const start = performance.now();
    fn(text);
    best = Math.min(best, performance.now() - start);
  }
  return best;
}

const N = 25_000;

/**
 * The times at n and 4n; measured again when they look super-linear, since a shared machine can
 * stall one run (a quadratic function is slow every time).
 */
function scaling(fn: (text: string) => unknown, make: (n: number) => string): [number, number] {
  const small = fastest(fn, make(N));
  const large = fastest(fn, make(4 * N));
  if (large / Math.max(small, 1) < 8) return [small, large];
  return [fastest(fn, make(N)), fastest(fn, make(4 * N))];
}
/** Below this a run is too short to time: scaling is only judged above it. */
const NOISE_MS = 15;

describe('bounded work per event on adversarial text', () => {
  it('should scale linearly: time(4n) / time(n) < 8 for every function × shape', () => {
    const superLinear: string[] = [];
    for (const [name, fn] of Object.entries(EVENT_TEXT_FUNCTIONS)) {
      for (const [shape, make] of Object.entries(ADVERSARIAL_SHAPES)) {
        const [small, large] = scaling(fn, make);
        if (large > NOISE_MS && large / Math.max(small, 1) >= 8) {
          superLinear.push(`${name} ${shape}: ${small.toFixed(1)} → ${large.toFixed(1)} ms`);
        }
      }
    }
    expect(superLinear).toEqual([]);
  }, 120_000);

  it('should get through a 5 MB errorMessage and a 5 MB token', () => {
    const fiveMb = 5 * 1024 * 1024;
    for (const shape of ['word', 'dashed', 'dotted', 'path', 'hex']) {
      const text = ADVERSARIAL_SHAPES[shape](fiveMb);
      expect(normaliseErrorMessage(text).length).toBeLessThanOrEqual(300);
      expect(intentKeywords(text)).toBeInstanceOf(Array);
    }
  }, 60_000);

  it('should keep the normalised key of an ordinary message', () => {
    expect(normaliseErrorMessage('Error in /tmp/x/a.ts:12 at 10:02:03 (token.ts) 0xff')).toBe(
      'Error in <path>:<n> at <time> (<path>) <hex>',
    );
    expect(intentKeywords(`refresh ${'ab12'.repeat(40)} token`)).toEqual(['refresh', 'token']);
  });
});
