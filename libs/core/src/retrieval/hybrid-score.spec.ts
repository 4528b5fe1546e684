import { describe, expect, it } from 'vitest';
import type { FusedCandidate } from './fusion';
import { daysSince, frequencyScore, recencyScore, scoreSubject } from './hybrid-score';
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

  it('should scale frequency logarithmically against the most used candidate', () => {
    expect(frequencyScore(3, 7)).toBeCloseTo(2 / 3, 12); // log 4 / log 8
    expect(frequencyScore(7, 7)).toBe(1);
    expect(frequencyScore(0, 0)).toBe(0); // not 0/0
    expect(frequencyScore(-2, 5)).toBe(0);
  });

  it('should combine 0.6·relevance + 0.25·recency + 0.15·frequency and weight by phase (by hand)', () => {
    const score = scoreSubject(
      {
        id: 'm1',
        memoryType: 'gotcha',
        lastAccessedAt: NOW - 30 * DAY,
        accessCount: 3,
        stale: false,
      },
      { basis: 'query', fused: FUSED },
      { phase: 'implement', now: NOW, maxAccessCount: 7 },
      CONFIG,
    );
    // 0.6·0.8 + 0.25·e^-1 + 0.15·(2/3) = 0.48 + 0.0919699 + 0.1 = 0.6719699; × 1.5 (implement/gotcha)
    expect(score.base).toBeCloseTo(0.48 + 0.25 * Math.exp(-1) + 0.1, 12);
    expect(score.base).toBeCloseTo(0.6719699, 6);
    expect(score.phaseWeight).toBe(1.5);
    expect(score.finalScore).toBeCloseTo(1.0079549, 6);
    expect(score).toMatchObject({
      bm25: 4,
      bm25Rank: 1,
      knn: 0.6,
      knnRank: 2,
      relevanceBasis: 'query',
      stalePenalty: 1,
    });
  });

  it('should apply the stale penalty to the final score and fall back to 1.0 for unlisted types', () => {
    const score = scoreSubject(
      { id: 'm2', memoryType: 'preference', lastAccessedAt: NOW, accessCount: 0, stale: true },
      { basis: 'confidence', confidence: 0.9 },
      { phase: 'reflect', now: NOW, maxAccessCount: 0 },
      CONFIG,
    );
    // 0.6·0.9 + 0.25·1 + 0 = 0.79; reflect has no preference entry → 1.0; stale → × 0.5
    expect(score.base).toBeCloseTo(0.79, 12);
    expect(score.phaseWeight).toBe(1);
    expect(score.stalePenalty).toBe(0.5);
    expect(score.finalScore).toBeCloseTo(0.395, 12);
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
      },
      { basis: 'query', fused: FUSED },
      { phase: 'implement', now: NOW, maxAccessCount: 7, hyde: true },
      CONFIG,
    );
    expect(explainScore(score, CONFIG.hybrid)).toBe(
      'final 1.0080 = base 0.6720 × phase 1.50 (implement/gotcha) × stale 1.00; ' +
        'base = 0.60×0.8000 (relevance: rrf #1/#2 → 1.0000, cosine 0.6000 (computed)) + ' +
        '0.25×0.3679 (recency, 30.0 d) + 0.15×0.6667 (frequency, 3/7); via HyDE',
    );
  });
});
