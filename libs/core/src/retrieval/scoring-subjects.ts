import type { Episode, Memory } from '@engram/contracts';
import { effectiveHalfLifeDays } from '../memory/half-life';
import { NEUTRAL_USE, type ScoringSubject } from './hybrid-score';
import { isStale } from './stale';

/**
 * A memory's priors come from what no recall writes (issue #23: returns are not uses, and the
 * same query over the same data must give the same list): recency from when it was learned
 * (createdAt), aged by the memory's own half-life (`decayHalfLifeDays`, else its type's: a
 * work_state fades within weeks, a gotcha keeps its recency for months; a type without one keeps
 * the configured clock), use from its confidence, which feedback moves. accessCount and
 * lastAccessedAt (access tracking) are reported and gate proactive injection, but never rank a
 * search.
 */
export function memorySubject(memory: Memory): ScoringSubject {
  return {
    id: memory.memoryId,
    memoryType: memory.memoryType,
    lastAccessedAt: memory.createdAt,
    halfLifeDays: effectiveHalfLifeDays(memory),
    accessCount: memory.accessCount,
    stale: isStale(memory),
    use: memory.confidence,
  };
}

/**
 * Episodes are not access-tracked: their recency clock is when they ended (or started, while
 * open) and their frequency is 0. They have no memory type, so their phase weight is 1.0.
 */
export function episodeSubject(episode: Episode): ScoringSubject {
  return {
    id: episode.episodeId,
    memoryType: null,
    lastAccessedAt: episode.endedAt ?? episode.startedAt,
    accessCount: 0,
    stale: false,
    use: NEUTRAL_USE,
  };
}
