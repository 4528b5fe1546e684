import { describe, expect, it } from 'vitest';
import { mergeTierHits, type TierHit } from './recall-merge';
import type { RecallTier } from './recall-request';
import type { ScoreComponents } from './score-components';

function hit(tier: RecallTier, id: string, finalScore: number, relevance = 0.5): TierHit {
  return { tier, id, score: { finalScore, relevance } as ScoreComponents };
}

describe('mergeTierHits', () => {
  it('should interleave tiers by final score and keep k', () => {
    const merged = mergeTierHits(
      [
        [hit('memories', 'm1', 0.9), hit('memories', 'm2', 0.3)],
        [hit('episodes', 'e1', 0.7)],
        [hit('turns', 't1', 0.8)],
      ],
      3,
    );
    expect(merged.map((h) => h.id)).toEqual(['m1', 't1', 'e1']);
  });

  it('should break ties by relevance, then tier order, then id', () => {
    const merged = mergeTierHits(
      [
        [hit('turns', 't1', 0.5, 0.5), hit('turns', 't0', 0.5, 0.5)],
        [hit('episodes', 'e1', 0.5, 0.5), hit('memories', 'm1', 0.5, 0.4)],
      ],
      10,
    );
    expect(merged.map((h) => h.id)).toEqual(['e1', 't0', 't1', 'm1']);
  });
});
