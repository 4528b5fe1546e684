import { compareText } from './ordering';
import { RECALL_TIERS, type RecallTier } from './recall-request';
import type { ScoreComponents } from './score-components';

/** One ranked result of one tier, whatever its document. */
export interface TierHit {
  tier: RecallTier;
  id: string;
  score: ScoreComponents;
}

function tierOrder(tier: RecallTier): number {
  return RECALL_TIERS.indexOf(tier);
}

/**
 * The results of several tiers as one list of at most `k`: by final score, then relevance, then
 * tier (memories, episodes, turns: the distilled form before the raw one), then id. Final scores
 * of different tiers are comparable because every tier is scored with the same formula against
 * the same query; the one asymmetry is intended: only memories are access-tracked, so only they
 * earn a frequency prior.
 */
export function mergeTierHits<H extends TierHit>(lists: readonly (readonly H[])[], k: number): H[] {
  return lists
    .flat()
    .sort(
      (a, b) =>
        b.score.finalScore - a.score.finalScore ||
        b.score.relevance - a.score.relevance ||
        tierOrder(a.tier) - tierOrder(b.tier) ||
        compareText(a.id, b.id),
    )
    .slice(0, Math.max(0, k));
}
