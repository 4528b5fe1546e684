import { describe, expect, it } from 'vitest';
import type { MemoryCandidate } from '../candidates';
import { observerSettings, type ThresholdSignal } from '../observer-settings';
import { DAY, T0 } from '../testing/observer-fixtures';
import { checkNovelty, passesFrequency, scoreCandidate } from './scoring';

const settings = observerSettings();

function candidate(
  signalType: ThresholdSignal,
  frequency: number,
  overrides: Partial<MemoryCandidate> = {},
): MemoryCandidate {
  return {
    key: 'gotcha:a.ts',
    memoryType: 'gotcha',
    naturalKey: 'a.ts',
    rule: 'gotcha',
    signalType,
    source: 'observer_inferred',
    scope: 'module',
    frequency,
    lastObservedAt: T0,
    relatedFiles: ['a.ts'],
    relatedModules: ['.'],
    evidence: { sessionIds: [], eventIds: [], latest: null },
    facts: { kind: 'remember_request', text: 'x' },
    ...overrides,
  };
}

describe('passesFrequency', () => {
  it.each([
    ['file_access', 3],
    ['co_access', 2],
    ['error_retry', 2],
    ['backtrack', 2],
    ['dead_end', 1],
  ] as const)('should pass %s at %i and not one below', (signalType, threshold) => {
    expect(passesFrequency(candidate(signalType, threshold), settings)).toBe(true);
    expect(passesFrequency(candidate(signalType, threshold - 1), settings)).toBe(false);
  });
});

describe('checkNovelty', () => {
  const existing = [
    { memoryId: 'm1', embedding: [1, 0, 0], embeddingModel: 'mini' },
    { memoryId: 'm2', embedding: [0.6, 0.8, 0], embeddingModel: 'mini' },
    { memoryId: 'm3', embedding: [0, 1, 0], embeddingModel: 'other-model' },
    { memoryId: 'm4', embedding: [0, 1], embeddingModel: 'mini' },
  ];

  it('should take the nearest memory of the same model and length', () => {
    const check = checkNovelty({ vector: [0, 1, 0], model: 'mini' }, existing, 'self');
    expect(check.nearestMemoryId).toBe('m2');
    expect(check.maxCosine).toBeCloseTo(0.8);
    expect(check.novelty).toBeCloseTo(0.2);
  });

  it('should not compare a memory with its own earlier version (same deterministic id)', () => {
    const check = checkNovelty({ vector: [1, 0, 0], model: 'mini' }, existing, 'm1');
    expect(check.nearestMemoryId).toBe('m2');
  });

  it('should count a candidate without embedding, or with nothing comparable, as novel', () => {
    expect(checkNovelty(undefined, existing, 'x')).toEqual({
      maxCosine: null,
      nearestMemoryId: null,
      novelty: 1,
    });
    expect(checkNovelty({ vector: [1, 0, 0], model: 'new' }, existing, 'x').novelty).toBe(1);
  });

  it('should floor a negative cosine at novelty 1', () => {
    expect(
      checkNovelty({ vector: [-1, 0, 0], model: 'mini' }, existing.slice(0, 1), 'x').novelty,
    ).toBe(1);
  });
});

describe('scoreCandidate', () => {
  const novel = { maxCosine: null, nearestMemoryId: null, novelty: 1 };

  it('should normalise frequency to 0.5 at the threshold and 1 at twice it', () => {
    expect(scoreCandidate(candidate('co_access', 2), novel, T0, settings).frequency).toBe(0.5);
    expect(scoreCandidate(candidate('co_access', 4), novel, T0, settings).frequency).toBe(1);
    expect(scoreCandidate(candidate('co_access', 9), novel, T0, settings).frequency).toBe(1);
    expect(scoreCandidate(candidate('qa_failure', 1), novel, T0, settings).frequency).toBe(1);
  });

  it('should halve recency every 14 days and never exceed 1', () => {
    expect(
      scoreCandidate(candidate('co_access', 2), novel, T0 + 14 * DAY, settings).recency,
    ).toBeCloseTo(0.5);
    expect(scoreCandidate(candidate('co_access', 2), novel, T0 - DAY, settings).recency).toBe(1);
  });

  it('should weigh 0.4 f + 0.3 r + 0.3 n against 0.6, and 0.3 for dead ends', () => {
    const old = scoreCandidate(
      candidate('co_access', 2),
      { ...novel, novelty: 0.5 },
      T0 + 14 * DAY,
      settings,
    );
    expect(old.score).toBeCloseTo(0.4 * 0.5 + 0.3 * 0.5 + 0.3 * 0.5);
    expect(old.threshold).toBe(0.6);
    const deadEnd = scoreCandidate(
      candidate('dead_end', 1, { memoryType: 'dead_end' }),
      novel,
      T0,
      settings,
    );
    expect(deadEnd.threshold).toBe(0.3);
  });
});
