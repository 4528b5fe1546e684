import { describe, expect, it } from 'vitest';
import type { FusedCandidate } from './fusion';
import {
  daysSince,
  frequencyScore,
  recencyScore,
  scoreSubject,
  subjectRecency,
} from './hybrid-score';
import { DEFAULT_RANKING_CONFIG as CONFIG } from './ranking-config';
import { explainScore } from './score-components';
import { DAY, NOW } from './testing/fixtures';

const FUSED: FusedCandidate = {
  id: 'm1',
  bm25: 4,
  bm25Rank: 1,
  knn: 0.6,
  knnRank: 2,
  cosineStatus: 'computed',
  fused: 0.03,
  fusedNormalised: 1,
  relevance: 0.8,
};

describe('hybrid score', () => {
  it('should decay recency to 1/e after 30 days and clamp future accesses to today', () => {
    expect(recencyScore(0, 30)).toBe(1);
    expect(recencyScore(30, 30)).toBeCloseTo(Math.exp(-1), 12);
    expect(daysSince(NOW - 45 * DAY, NOW)).toBe(45);
    expect(daysSince(NOW + DAY, NOW)).toBe(0);
  });

  it('should halve recency every half-life, and keep the configured clock without one', () => {
    expect(subjectRecency(7, 7, CONFIG)).toBeCloseTo(0.5, 12);
    expect(subjectRecency(28, 7, CONFIG)).toBeCloseTo(0.0625, 12);
    expect(subjectRecency(28, 90, CONFIG)).toBeCloseTo(Math.pow(0.5, 28 / 90), 12);
    expect(subjectRecency(0, 7, CONFIG)).toBe(1);
    // the default figures, unchanged for documents without a half-life
    expect(subjectRecency(30, null, CONFIG)).toBeCloseTo(Math.exp(-1), 12);
    expect(subjectRecency(30, undefined, CONFIG)).toBe(recencyScore(30, 30));
  });

  it('should score a subject by its half-life and say so, a corrupt one counting as none', () => {
    const subject = {
      id: 'ws',
      memoryType: 'work_state' as const,
      lastAccessedAt: NOW - 14 * DAY,
      accessCount: 0,
      stale: false,
      use: 0.6,
    };
    const context = { phase: 'implement' as const, now: NOW, maxAccessCount: 0 };
    const input = { basis: 'confidence' as const, confidence: 0.6 };
    const aged = scoreSubject({ ...subject, halfLifeDays: 7 }, input, context, CONFIG);
    expect(aged.recency).toBeCloseTo(0.25, 12);
    expect(aged.halfLifeDays).toBe(7);
    expect(explainScore(aged, CONFIG.hybrid, CONFIG.priors)).toContain(
      '0.25×0.2500 (recency, 14.0 d, half-life 7 d)',
    );
    for (const bad of [0, -1, Number.NaN]) {
      const none = scoreSubject({ ...subject, halfLifeDays: bad }, input, context, CONFIG);
      expect(none.halfLifeDays).toBeNull();
      expect(none.recency).toBeCloseTo(Math.exp(-14 / 30), 12);
    }
  });

  it('should scale frequency logarithmically against the most used candidate', () => {
    expect(frequencyScore(3, 7)).toBeCloseTo(2 / 3, 12); // log 4 / log 8
    expect(frequencyScore(7, 7)).toBe(1);
    expect(frequencyScore(0, 0)).toBe(0); // not 0/0
    expect(frequencyScore(-2, 5)).toBe(0);
  });

  it('should let relevance dominate: priors within a band, phase damped (by hand)', () => {
    const score = scoreSubject(
      {
        id: 'm1',
        memoryType: 'gotcha',
        lastAccessedAt: NOW - 30 * DAY,
        accessCount: 3,
        stale: false,
        use: 0.8,
      },
      { basis: 'query', fused: FUSED },
      { phase: 'implement', now: NOW, maxAccessCount: 7 },
      CONFIG,
    );
    // prior = (0.25·e^-1 + 0.15·0.8) / 0.4 = 0.5299262; base = 0.8·(0.9 + 0.1·prior)
    const prior = (0.25 * Math.exp(-1) + 0.15 * 0.8) / 0.4;
    expect(score.base).toBeCloseTo(0.8 * (0.9 + 0.1 * prior), 12);
    expect(score.phaseWeight).toBe(1.5);
    expect(score.phaseFactor).toBeCloseTo(Math.pow(1.5, 0.25), 12);
    expect(score.finalScore).toBeCloseTo(score.base * Math.pow(1.5, 0.25), 12);
    // the access count is reported, never ranked: use is the confidence
    expect(score).toMatchObject({ accessCount: 3, frequency: 0.8, relevanceBasis: 'query' });
  });

  it('should never lift a document of 60 % of the relevance over another, whatever its priors', () => {
    // the extremes: validate weighs error_pattern 1.5 and prefetch_pattern 0.3 (the table's
    // range); the favoured one new and fully confident, the other ten years old and of no use
    const context = { phase: 'validate' as const, now: NOW, maxAccessCount: 1e6 };
    const favoured = scoreSubject(
      {
        id: 'a',
        memoryType: 'error_pattern',
        lastAccessedAt: NOW,
        accessCount: 1e6,
        stale: false,
        use: 1,
      },
      { basis: 'confidence', confidence: 0.6 },
      context,
      CONFIG,
    );
    const relevant = scoreSubject(
      {
        id: 'b',
        memoryType: 'prefetch_pattern',
        lastAccessedAt: NOW - 3650 * DAY,
        accessCount: 0,
        stale: false,
        use: 0,
      },
      { basis: 'confidence', confidence: 1 },
      context,
      CONFIG,
    );
    expect(favoured.finalScore / relevant.finalScore).toBeCloseTo(
      (0.6 * Math.pow(1.5, 0.25)) / (0.9 * Math.pow(0.3, 0.25)),
      6,
    );
    expect(relevant.finalScore).toBeGreaterThan(favoured.finalScore);
  });

  it('should apply the stale penalty to the final score and fall back to 1.0 for unlisted types', () => {
    const score = scoreSubject(
      {
        id: 'm2',
        memoryType: 'preference',
        lastAccessedAt: NOW,
        accessCount: 0,
        stale: true,
        use: 1,
      },
      { basis: 'confidence', confidence: 0.9 },
      { phase: 'reflect', now: NOW, maxAccessCount: 0 },
      CONFIG,
    );
    // prior 1 → base = 0.9; reflect has no preference entry → 1.0; stale → × 0.5
    expect(score.base).toBeCloseTo(0.9, 12);
    expect(score.phaseWeight).toBe(1);
    expect(score.stalePenalty).toBe(0.5);
    expect(score.finalScore).toBeCloseTo(0.45, 12);
    expect(score).toMatchObject({
      relevanceBasis: 'confidence',
      bm25Rank: 0,
      knnRank: 0,
      cosineStatus: null,
    });
  });

  it('should explain every component in one line', () => {
    const score = scoreSubject(
      {
        id: 'm1',
        memoryType: 'gotcha',
        lastAccessedAt: NOW - 30 * DAY,
        accessCount: 3,
        stale: false,
        use: 0,
      },
      { basis: 'query', fused: FUSED },
      { phase: 'implement', now: NOW, maxAccessCount: 7, hyde: true },
      CONFIG,
    );
    expect(explainScore(score, CONFIG.hybrid, CONFIG.priors)).toBe(
      'final 0.8172 = base 0.7384 × phase 1.1067 (implement/gotcha 1.50, damped) × stale 1.00; ' +
        'base = 0.8000 (relevance: rrf #1/#2 → 1.0000, cosine 0.6000 (computed)) × (1 − 0.1 + 0.1×prior); ' +
        'prior = 0.25×0.3679 (recency, 30.0 d) + 0.15×0.0000 (use: confidence; 3 returns, not ranked); via HyDE',
    );
  });
});
