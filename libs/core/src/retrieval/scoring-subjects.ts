import type { Episode, Memory } from '@engram/contracts';
import type { ScoringSubject } from './hybrid-score';
import { isStale } from './stale';

export function memorySubject(memory: Memory): ScoringSubject {
  return {
    id: memory.memoryId,
    memoryType: memory.memoryType,
    lastAccessedAt: memory.lastAccessedAt,
    accessCount: memory.accessCount,
    stale: isStale(memory),
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
  };
}
