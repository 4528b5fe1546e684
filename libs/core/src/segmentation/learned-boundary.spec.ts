import { describe, expect, it } from 'vitest';
import { decideBoundary } from './boundary';
import {
  DEFAULT_LEARNED_BOUNDARY_MODEL,
  LEARNED_BOUNDARY_FEATURES,
  LEXICAL_LEARNED_BOUNDARY_MODEL,
  learnedBoundaryFeatures,
  learnedBoundaryScore,
} from './learned-boundary';
import { segmenterSettings } from './segmenter-settings';

const MINUTE = 60_000;
const text = 'refactor the payment reconciliation worker retry schedule';

describe('learnedBoundaryFeatures', () => {
  it('should compute one value per feature from the prompt and the episode', () => {
    const features = learnedBoundaryFeatures({
      embedding: [1, 0],
      previous: [0, 1],
      centroidSum: [2, 0],
      keywords: ['alpha', 'beta'],
      bag: ['beta', 'gamma', 'delta'],
      episodePrompts: 3,
      afterLongGap: true,
    });
    expect(features).toHaveLength(LEARNED_BOUNDARY_FEATURES.length);
    expect(features[0]).toBeCloseTo(0); // cosPrevious
    expect(features[1]).toBeCloseTo(1); // cosEpisode
    expect(features[2]).toBeCloseTo(1 / 4); // jaccardBag
    expect(features[3]).toBeCloseTo(Math.log(3)); // keywords
    expect(features[4]).toBeCloseTo(Math.log(4)); // episodeLength
    expect(features[5]).toBe(1); // longGap
  });

  it('should score with the logistic function of the weighted sum', () => {
    expect(learnedBoundaryScore([1, 2], { bias: 0.5, weights: [1, -1] })).toBeCloseTo(
      1 / (1 + Math.exp(0.5)),
    );
  });

  it('should hold one weight per feature and a threshold in (0, 1)', () => {
    expect(DEFAULT_LEARNED_BOUNDARY_MODEL.weights).toHaveLength(LEARNED_BOUNDARY_FEATURES.length);
    expect(DEFAULT_LEARNED_BOUNDARY_MODEL.threshold).toBeGreaterThan(0);
    expect(DEFAULT_LEARNED_BOUNDARY_MODEL.threshold).toBeLessThan(1);
  });
});

describe('hybrid mode with the learned rule (the default)', () => {
  const settings = segmenterSettings({ mode: 'hybrid' });
  const episode = (previous: number[]) => ({
    bag: ['payment', 'reconcil', 'worker'],
    centroid: previous,
    previous,
    centroidSum: previous,
    prompts: 2,
  });
  const signal = (embedding: number[], gapMs = MINUTE) => ({
    text,
    gapMs,
    timeoutMs: 30 * MINUTE,
    embedding,
  });

  it('should be the default hybrid rule', () => {
    expect(settings.hybridRule).toBe('learned');
  });

  it('should continue a prompt close to the previous one and split an unrelated one', () => {
    const same = decideBoundary(episode([1, 0]), signal([1, 0]), settings);
    expect(same.boundary).toBe(false);
    expect(same.rule).toBe('similar');
    const unrelated = decideBoundary(episode([1, 0]), signal([-1, 0]), settings);
    expect(unrelated.boundary).toBe(true);
    expect(unrelated.rule).toBe('intent_shift');
    // reported as 1 − score against 1 − threshold: a boundary iff similarity < threshold
    expect(unrelated.similarity!).toBeLessThan(unrelated.threshold!);
    expect(same.similarity!).toBeGreaterThanOrEqual(same.threshold!);
  });

  it('should keep the terse-prompt rule of seed 000', () => {
    const verdict = decideBoundary(
      episode([1, 0]),
      { ...signal([-1, 0]), text: 'ok push it' },
      settings,
    );
    expect(verdict.rule).toBe('terse');
    expect(verdict.boundary).toBe(false);
  });

  it('should make a boundary likelier after a long gap', () => {
    const embedding = [0.6, 0.8];
    const short = decideBoundary(episode([1, 0]), signal(embedding), settings);
    const long = decideBoundary(episode([1, 0]), signal(embedding, 3 * 60 * MINUTE), settings);
    expect(long.similarity!).toBeLessThan(short.similarity!);
  });

  it('should fall back to the blended rule when only the episode has no embedding yet', () => {
    const verdict = decideBoundary({ bag: ['payment'], centroid: null }, signal([1, 0]), settings);
    expect(verdict.threshold).toBe(settings.hybridThreshold);
  });

  it('should decide with the lexical model when there are no embeddings at all (no model)', () => {
    const lexical = LEXICAL_LEARNED_BOUNDARY_MODEL;
    expect(lexical.weights.slice(0, 2)).toEqual([0, 0]);
    const noModel = { ...signal([]), embedding: null };
    const bag = ['refactor', 'payment', 'reconciliation', 'worker', 'retry', 'schedule'];
    const same = decideBoundary({ bag, centroid: null }, noModel, settings);
    expect(same.threshold).toBeCloseTo(1 - lexical.threshold);
    expect(same.boundary).toBe(false);
    const unrelated = decideBoundary(
      { bag: ['release', 'notes'], centroid: null },
      { ...noModel, gapMs: 3 * 60 * MINUTE },
      settings,
    );
    expect(unrelated.boundary).toBe(true);
    expect(unrelated.rule).toBe('intent_shift');
  });
});
