import { fuseCandidates, type FusionInput } from './fusion';
import { maxAccessCount, scoreSubject, type ScoringSubject } from './hybrid-score';
import { compareText } from './ordering';
import type { RankingConfig } from './ranking-config';
import type { ScoreComponents } from './score-components';
import type { UniversalPhase } from './universal-phase';

export interface RankDocumentsInput extends FusionInput {
  /**
   * The scoring facts of a candidate; undefined drops it (the document is gone from the store, is
   * out of scope, or fails the filter). Dropped candidates do not count towards maxAccessCount.
   */
  subjectOf: (id: string) => ScoringSubject | undefined;
  phase: UniversalPhase;
  now: number;
  /** Candidates that came from a HyDE query (flagged in their components). */
  hydeIds?: ReadonlySet<string>;
}

export interface ScoredDocument {
  id: string;
  score: ScoreComponents;
}

/**
 * The whole query-time ranking for any tier: fuse BM25 and kNN (RRF + exact cosine → relevance),
 * add recency and frequency priors, weight by phase and staleness. Sorted by final score
 * descending, then relevance descending, then id — the same input always gives the same order.
 */
export function rankDocuments(input: RankDocumentsInput, config: RankingConfig): ScoredDocument[] {
  const kept = fuseCandidates(input, config).flatMap((fused) => {
    const subject = input.subjectOf(fused.id);
    return subject ? [{ fused, subject }] : [];
  });
  const max = maxAccessCount(kept.map(({ subject }) => subject));
  return kept
    .map(({ fused, subject }) => ({
      id: fused.id,
      score: scoreSubject(
        subject,
        { basis: 'query', fused },
        {
          phase: input.phase,
          now: input.now,
          maxAccessCount: max,
          hyde: input.hydeIds?.has(fused.id) ?? false,
        },
        config,
      ),
    }))
    .sort(byScore);
}

/** final score descending, then relevance descending, then id ascending. */
export function byScore(a: ScoredDocument, b: ScoredDocument): number {
  return (
    b.score.finalScore - a.score.finalScore ||
    b.score.relevance - a.score.relevance ||
    compareText(a.id, b.id)
  );
}
