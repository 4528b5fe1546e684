import type { Episode } from '@engram/contracts';
import { episodeInTemporal } from './memory-filter';
import type { ModelVector } from './model-vector';
import { episodeProvenance, type Provenance } from './provenance';
import { rankRecords } from './rank-documents';
import type { RankingConfig } from './ranking-config';
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
 * 1.0, neutral use, recency from their end), scoped and optionally limited in time. Feeds
 * GetEpisodeSequence (relevance) and Recall.
 */
export function rankEpisodes(input: RankEpisodesInput, config: RankingConfig): RankedEpisode[] {
  const scope = requireScope(input.scope);
  const { episodes, scope: _scope, temporal, ...tier } = input;
  const inTime = (episode: Episode) => !temporal || episodeInTemporal(episode, temporal);
  return rankRecords(
    tier,
    new Map(episodes.map((episode) => [episode.episodeId, episode])),
    (episode) => inScope(episode, scope) && inTime(episode),
    episodeSubject,
    config,
  ).map(({ record: episode, score }) => ({
    episode,
    score,
    provenance: episodeProvenance(episode),
  }));
}
