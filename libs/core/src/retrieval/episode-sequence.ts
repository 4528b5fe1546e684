import type { Episode } from '@engram/contracts';
import { walkChain } from '../segmentation/chaining';
import { compareText } from './ordering';
import type { RankingConfig } from './ranking-config';
import { inScope, requireScope, type RecallScope } from './recall-scope';
import { InvalidRecallRequestError } from './retrieval-errors';

/**
 * Seed 003 §3: "what happened the last times I debugged this?" needs episodes about a topic in
 * the order they happened, not in similarity order. Over-fetch by similarity, keep the relevant
 * ones, sort by start time, trim.
 */

export interface ScoredEpisodeInput {
  episode: Episode;
  /** Relevance to the topic in [0, 1] (from the ranking core). */
  relevance: number;
}

export interface SequenceOptions {
  limit?: number;
  minRelevance?: number;
}

/** How many candidates to fetch by similarity for a sequence of `limit` (seed 003: limit × 2). */
export function sequenceFetchSize(limit: number, config: RankingConfig): number {
  return Math.ceil(sequenceLimit(limit, config) * config.sequence.overFetchFactor);
}

/**
 * Episodes of the scope with relevance strictly above `minRelevance` (0.5), oldest first (ties:
 * the more relevant, then by id), at most `limit` (10). Trimming keeps the oldest, as the seed
 * does: a replay starts where the story starts.
 */
export function selectEpisodeSequence(
  scope: RecallScope,
  candidates: readonly ScoredEpisodeInput[],
  options: SequenceOptions,
  config: RankingConfig,
): ScoredEpisodeInput[] {
  const checked = requireScope(scope);
  const minRelevance = options.minRelevance ?? config.sequence.minRelevance;
  const limit = sequenceLimit(options.limit ?? config.sequence.defaultLimit, config);
  const seen = new Set<string>();
  return candidates
    .filter(({ episode, relevance }) => {
      if (
        !inScope(episode, checked) ||
        !(relevance > minRelevance) ||
        seen.has(episode.episodeId)
      ) {
        return false;
      }
      seen.add(episode.episodeId);
      return true;
    })
    .sort(
      (a, b) =>
        a.episode.startedAt - b.episode.startedAt ||
        b.relevance - a.relevance ||
        compareText(a.episode.episodeId, b.episode.episodeId),
    )
    .slice(0, limit);
}

export interface EpisodeChain {
  /** Root first; the last is the requested episode. Empty when it is unknown or out of scope. */
  episodes: Episode[];
  cycleDetected: boolean;
  /** A parent id named in the chain that the store did not return (or out of scope). */
  missingParentId: string | null;
  truncated: boolean;
}

/**
 * The parent chain of an episode (seed 003 get_episode_chain), reusing the segmenter's cycle-safe
 * `walkChain`. `lookup` returns a stored episode; episodes of another tenant or project are
 * treated as unknown, so a forged parent link cannot leak them.
 */
export function resolveEpisodeChain(
  scope: RecallScope,
  episodeId: string,
  lookup: (episodeId: string) => Episode | undefined,
  maxDepth = 100,
): EpisodeChain {
  const checked = requireScope(scope);
  if (episodeId.trim() === '') throw new InvalidRecallRequestError('episodeId', 'is required');
  const visible = (id: string): Episode | undefined => {
    const episode = lookup(id);
    return episode && inScope(episode, checked) ? episode : undefined;
  };
  // undefined = unknown episode (stops the walk); null = a root.
  const parentOf = (id: string): string | null | undefined => {
    const episode = visible(id);
    return episode === undefined ? undefined : episode.parentEpisodeId;
  };
  const walk = walkChain(episodeId, parentOf, maxDepth);
  return {
    episodes: walk.episodeIds.map((id) => visible(id) as Episode),
    cycleDetected: walk.cycleAt !== null,
    missingParentId: walk.missing !== null && walk.missing !== episodeId ? walk.missing : null,
    truncated: walk.truncated,
  };
}

function sequenceLimit(limit: number, config: RankingConfig): number {
  if (!Number.isInteger(limit) || limit < 0) {
    throw new InvalidRecallRequestError('limit', `must be a non-negative integer, got ${limit}`);
  }
  return limit === 0 ? config.sequence.defaultLimit : limit;
}
