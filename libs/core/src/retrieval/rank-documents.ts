import { fuseCandidates, type FusionInput } from './fusion';
import type { ModelVector } from './model-vector';
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
 * move it within the priors' band (recency, use) and by the damped phase weight, then staleness
 * (hybrid-score.ts). Sorted by final score
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

/** A tier whose records carry no vector: the store passes them beside, by id. */
export interface RecordTierInput extends Omit<RankDocumentsInput, 'vectorOf' | 'subjectOf'> {
  vectors: ReadonlyMap<string, ModelVector>;
  limit?: number;
}

/**
 * rankDocuments over a tier's records by id: the candidates `eligible` keeps (in scope, in time),
 * scored with `subjectOf`, at most `limit` — the episodes and turns tiers, which differ only in
 * their records and filters.
 */
export function rankRecords<T>(
  input: RecordTierInput,
  byId: ReadonlyMap<string, T>,
  eligible: (record: T) => boolean,
  subjectOf: (record: T) => ScoringSubject,
  config: RankingConfig,
): { record: T; score: ScoreComponents }[] {
  const { vectors, limit, ...rest } = input;
  const scored = rankDocuments(
    {
      ...rest,
      vectorOf: (id) => vectors.get(id),
      subjectOf: (id) => {
        const record = byId.get(id);
        return record !== undefined && eligible(record) ? subjectOf(record) : undefined;
      },
    },
    config,
  );
  const limited = limit === undefined ? scored : scored.slice(0, Math.max(0, limit));
  return limited.map(({ id, score }) => ({ record: byId.get(id) as T, score }));
}

/** final score descending, then relevance descending, then id ascending. */
export function byScore(a: ScoredDocument, b: ScoredDocument): number {
  return (
    b.score.finalScore - a.score.finalScore ||
    b.score.relevance - a.score.relevance ||
    compareText(a.id, b.id)
  );
}
