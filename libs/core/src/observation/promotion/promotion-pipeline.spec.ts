import { describe, expect, it } from 'vitest';
import { observerSettings } from '../observer-settings';
import {
  authWorkSessions,
  DAY,
  NO_RANKING,
  promotionInput,
  T0,
} from '../testing/observer-fixtures';
import { draftCandidates, promotionCap, rankCandidates } from './promotion-pipeline';

const settings = observerSettings();

describe('promotion pipeline', () => {
  describe('draftCandidates', () => {
    it('should draft candidates whose counts reach their thresholds, with template text', () => {
      const { drafts, rejected } = draftCandidates(promotionInput(authWorkSessions(3)));
      expect(drafts.map((d) => d.key.split(':')[0])).toEqual([
        'causal_dependency',
        'gotcha',
        'prefetch_pattern',
      ]);
      expect(rejected).toEqual([]);
      expect(drafts[1].draft.content).toBe(
        'Edits to `src/auth/session.ts` often need correcting: re-edited within 2 step(s), 3 times (likely cause: wrong assumption). Check assumptions before editing it.',
      );
    });

    it('should reject below the frequency threshold, saying why', () => {
      const { drafts, rejected } = draftCandidates(promotionInput(authWorkSessions(1)));
      expect(drafts).toEqual([]);
      expect(rejected).toEqual([
        expect.objectContaining({
          key: 'gotcha:src/auth/session.ts',
          stage: 'frequency',
          detail: 'backtrack count 1 < 2',
        }),
      ]);
    });
  });

  describe('rankCandidates', () => {
    const { drafts } = draftCandidates(promotionInput(authWorkSessions(3)));
    const gotcha = drafts[1];
    const existing = (cos: number) => [
      { memoryId: 'other', embedding: [cos, Math.sqrt(1 - cos * cos)], embeddingModel: 'mini' },
    ];
    const embedded = new Map([[gotcha.key, { vector: [1, 0], model: 'mini' }]]);

    it('should reject a candidate at cosine 0.88 to an existing memory and keep one at 0.87', () => {
      const near = rankCandidates(
        drafts,
        { ...NO_RANKING, embeddings: embedded, existingMemories: existing(0.88) },
        T0,
        settings,
      );
      expect(near.rejected).toEqual([
        expect.objectContaining({ key: gotcha.key, stage: 'novelty' }),
      ]);
      const apart = rankCandidates(
        drafts,
        { ...NO_RANKING, embeddings: embedded, existingMemories: existing(0.87) },
        T0,
        settings,
      );
      expect(apart.selected.map((c) => c.key)).toContain(gotcha.key);
    });

    it('should reject a candidate scoring 0.6 or less', () => {
      const later = T0 + 60 * DAY;
      const { rejected } = rankCandidates(
        drafts,
        { ...NO_RANKING, embeddings: embedded, existingMemories: existing(0.5) },
        later,
        settings,
      );
      expect(rejected).toContainEqual(expect.objectContaining({ key: gotcha.key, stage: 'score' }));
    });

    it('should cap by task complexity, sharing the cap with earlier incremental promotions', () => {
      expect([
        promotionCap('trivial', settings),
        promotionCap('standard', settings),
        promotionCap('complex', settings),
        promotionCap(null, settings),
      ]).toEqual([2, 10, 25, 10]);
      const trivial = rankCandidates(
        drafts,
        { complexity: 'trivial', alreadyPromoted: 0 },
        T0,
        settings,
      );
      expect(trivial.selected).toHaveLength(2);
      expect(trivial.rejected).toEqual([expect.objectContaining({ stage: 'cap' })]);
      const scores = trivial.selected.map((c) => c.breakdown.score);
      expect(scores).toEqual([...scores].sort((a, b) => b - a));
      expect(
        rankCandidates(drafts, { complexity: 'trivial', alreadyPromoted: 1 }, T0, settings)
          .selected,
      ).toHaveLength(1);
      expect(
        rankCandidates(drafts, { complexity: 'trivial', alreadyPromoted: 5 }, T0, settings)
          .selected,
      ).toEqual([]);
    });
  });
});
