import type { Episode } from '@engram/contracts';
import {
  episodeProvenance,
  InvalidRecallRequestError,
  MAX_RECALL_K,
  renderTopicReplay,
  requireScope,
  resolveEpisodeChain,
  selectEpisodeSequence,
  sequenceFetchSize,
  type Provenance,
  type RankingConfig,
  type RecallScope,
  type ScoreComponents,
  anyOfFilter,
  episodeFilters,
} from '@engram/core';
import { episodeFromSource, type EpisodeDocument } from '@engram/core';
import { optionalCount } from './context.service';
import type { RecallStore } from './recall-store';
import type { RecallService } from './recall.service';

/** An episode with its score when it was found by a search (null in a chain walk). */
export interface ScoredEpisodeHit {
  episode: Episode;
  score: ScoreComponents | null;
  provenance: Provenance;
}

export interface EpisodeSequenceInput {
  tenantId: string;
  projectId: string;
  topic: string;
  /** 0 or absent: the default (10; ReplayTopic 5). */
  limit?: number;
  /** 0 or absent: the default (0.5). */
  minRelevance?: number;
}

export interface EpisodeChainAnswer {
  episodes: ScoredEpisodeHit[];
  cycleDetected: boolean;
}

/** A parent chain longer than this is cut (the core reports it truncated). */
const MAX_CHAIN_DEPTH = 100;

/**
 * Seed 003's episode history rpcs: GetEpisodeSequence (what happened about a topic, in order),
 * GetEpisodeChain (the parent links of an episode, root first) and ReplayTopic (a sequence as a
 * readable history). Similarity search is RecallService's; order, relevance floor and chain
 * walking are the core's.
 */
export class EpisodeHistoryService {
  private readonly config: RankingConfig;

  constructor(
    private readonly store: RecallStore,
    private readonly recall: RecallService,
    config: RankingConfig,
  ) {
    this.config = config;
  }

  /** Episodes about the topic with relevance above the floor, oldest first. */
  async sequence(input: EpisodeSequenceInput): Promise<ScoredEpisodeHit[]> {
    const scope = requireScope(input);
    const topic = input.topic?.trim() ?? '';
    if (topic === '') throw new InvalidRecallRequestError('topic', 'is required');
    const limit = optionalCount(input.limit, 'limit') ?? this.config.sequence.defaultLimit;
    const minRelevance = minRelevanceOf(input.minRelevance, this.config);
    const answer = await this.recall.recall({
      ...scope,
      query: topic,
      tier: 'episodes',
      k: Math.min(MAX_RECALL_K, sequenceFetchSize(limit, this.config)),
    });
    const found = new Map<string, ScoredEpisodeHit>();
    for (const hit of answer.results) {
      if (hit.tier !== 'episodes') continue;
      found.set(hit.id, { episode: hit.episode, score: hit.score, provenance: hit.provenance });
    }
    const chosen = selectEpisodeSequence(
      scope,
      [...found.values()].map((hit) => ({
        episode: hit.episode,
        relevance: hit.score?.relevance ?? 0,
      })),
      { limit, minRelevance },
      this.config,
    );
    return chosen.map(({ episode }) => found.get(episode.episodeId) as ScoredEpisodeHit);
  }

  /** ReplayTopic: the sequence (default 5) and seed 003's rendering of it. */
  async replay(
    input: EpisodeSequenceInput,
  ): Promise<{ episodes: ScoredEpisodeHit[]; rendered: string }> {
    const limit = optionalCount(input.limit, 'limit') ?? this.config.sequence.replayDefaultLimit;
    const episodes = await this.sequence({ ...input, limit });
    const topic = input.topic.trim();
    return {
      episodes,
      rendered: renderTopicReplay(
        topic,
        episodes.map((e) => e.episode),
      ),
    };
  }

  /**
   * The parent chain of an episode, root first. Parents are fetched one by one (a chain is a
   * handful of episodes); the walk itself — cycles, depth, scope — is the core's.
   */
  async chain(input: {
    tenantId: string;
    projectId: string;
    episodeId: string;
  }): Promise<EpisodeChainAnswer> {
    const scope = requireScope(input);
    const start = input.episodeId?.trim() ?? '';
    if (start === '') throw new InvalidRecallRequestError('episodeId', 'is required');
    const known = new Map<string, Episode>();
    let next: string | null = start;
    while (next !== null && !known.has(next) && known.size < MAX_CHAIN_DEPTH) {
      const episode = await this.episodeById(scope, next);
      if (!episode) break;
      known.set(episode.episodeId, episode);
      next = episode.parentEpisodeId;
    }
    const chain = resolveEpisodeChain(scope, start, (id) => known.get(id), MAX_CHAIN_DEPTH);
    return {
      episodes: chain.episodes.map((episode) => ({
        episode,
        score: null,
        provenance: episodeProvenance(episode),
      })),
      cycleDetected: chain.cycleDetected,
    };
  }

  private async episodeById(scope: RecallScope, episodeId: string): Promise<Episode | undefined> {
    const [doc] = await this.store.list<EpisodeDocument>('episodes', {
      scope,
      filter: [...episodeFilters(undefined), anyOfFilter('episodeId', [episodeId])],
      size: 1,
    });
    return doc ? episodeFromSource(doc.source) : undefined;
  }
}

function minRelevanceOf(value: number | undefined, config: RankingConfig): number {
  if (value === undefined || value === 0) return config.sequence.minRelevance;
  if (!(value >= 0 && value <= 1)) {
    throw new InvalidRecallRequestError('minRelevance', `must be in [0, 1], got ${value}`);
  }
  return value;
}
