import type { Episode } from '@engram/contracts';
import { episodeInTemporal } from './memory-filter';
import type { ModelVector } from './model-vector';
import { episodeProvenance, type Provenance } from './provenance';
import { rankDocuments } from './rank-documents';
import { DEFAULT_RANKING_CONFIG, type RankingConfig } from './ranking-config';
import { inScope, requireScope, type RecallScope } from './recall-scope';
import type { RankedHit } from './rrf';
import type { ScoreComponents } from './score-components';
import { episodeSubject } from './scoring-subjects';
import type { TemporalConstraint } from './temporal';
import type { UniversalPhase } from './universal-phase';

export interface RankedEpisode {
  episode: Episode;
  score: ScoreComponents;
  provenance: Provenance;
}

export interface RankEpisodesInput {
  scope: RecallScope;
  phase: UniversalPhase;
  now: number;
  bm25: readonly RankedHit[];
  knn: readonly RankedHit[] | null;
  query: ModelVector | null;
  episodes: readonly Episode[];
  /** Episode records carry no vector; the index does, and the adapter passes it here. */
  vectors: ReadonlyMap<string, ModelVector>;
  temporal?: TemporalConstraint;
  limit?: number;
}

/**
 * Recall on the episodes tier: the same fusion and priors as memories (episodes: phase weight
 * 1.0, frequency 0, recency from their end), scoped and optionally limited in time. Feeds
 * GetEpisodeSequence (relevance) and Recall.
 */
export function rankEpisodes(
  input: RankEpisodesInput,
  config: RankingConfig = DEFAULT_RANKING_CONFIG,
): RankedEpisode[] {
  const scope = requireScope(input.scope);
  const byId = new Map(input.episodes.map((episode) => [episode.episodeId, episode]));
  const eligible = (id: string): Episode | undefined => {
    const episode = byId.get(id);
    if (!episode || !inScope(episode, scope)) return undefined;
    return !input.temporal || episodeInTemporal(episode, input.temporal) ? episode : undefined;
  };
  const scored = rankDocuments(
    {
      bm25: input.bm25,
      knn: input.knn,
      query: input.query,
      vectorOf: (id) => input.vectors.get(id),
      subjectOf: (id) => {
        const episode = eligible(id);
        return episode ? episodeSubject(episode) : undefined;
      },
      phase: input.phase,
      now: input.now,
    },
    config,
  );
  const limited = input.limit === undefined ? scored : scored.slice(0, Math.max(0, input.limit));
  return limited.map(({ id, score }) => {
    const episode = byId.get(id) as Episode;
    return { episode, score, provenance: episodeProvenance(episode) };
  });
}
