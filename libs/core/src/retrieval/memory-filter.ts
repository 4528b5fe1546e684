import type { Episode, Memory, MemoryScope, MemoryType } from '@engram/contracts';
import { anySameFile } from './file-paths';
import type { StaleConfig } from './ranking-config';
import { inScope, requireScope, type RecallScope } from './recall-scope';
import { InvalidRecallRequestError } from './retrieval-errors';
import { isStale, presentMemory } from './stale';
import { inRange, inSessions, overlapsRange, type TemporalConstraint } from './temporal';

/** Explicit searches return stale memories penalised; `exclude` drops them (proto exclude_stale). */
export type StaleMode = 'penalise' | 'exclude';

/**
 * What a recall may return, as data: the store adapter translates it into its own query (an
 * Elasticsearch bool filter, a SQL WHERE) and `memoryMatchesFilter` is the same rule as a
 * predicate — for the embedded store and as a last check on whatever the store returned.
 * Tenant and project are always required. Empty or absent lists mean "any".
 */
export interface MemoryFilter extends RecallScope {
  types?: readonly MemoryType[];
  scopes?: readonly MemoryScope[];
  /** Memories about any of these files. */
  relatedFiles?: readonly string[];
  /** Compared with the presented confidence (after the stale penalty), inclusive. */
  minConfidence?: number;
  temporal?: TemporalConstraint;
  stale?: StaleMode;
}

/**
 * The filter with its scope checked and trimmed; throws InvalidRecallRequestError naming the field
 * (tenantId, projectId, minConfidence, relatedFiles).
 */
export function validateMemoryFilter(filter: Partial<MemoryFilter>): MemoryFilter {
  const scope = requireScope(filter);
  const { minConfidence } = filter;
  if (minConfidence !== undefined && !(minConfidence >= 0 && minConfidence <= 1)) {
    throw new InvalidRecallRequestError(
      'minConfidence',
      `must be within [0, 1], got ${minConfidence}`,
    );
  }
  if (filter.relatedFiles?.some((file) => file.trim() === '')) {
    throw new InvalidRecallRequestError('relatedFiles', 'must not contain empty paths');
  }
  return { ...filter, ...scope };
}

/**
 * Why a memory fails the filter, or null when it passes. Reasons are stable strings: tests and
 * the "why was this not returned" debug output use them.
 */
export function memoryFilterRejection(
  memory: Memory,
  filter: MemoryFilter,
  stale: StaleConfig,
): MemoryRejection | null {
  if (!inScope(memory, filter)) return 'out_of_scope';
  if (nonEmpty(filter.types) && !filter.types.includes(memory.memoryType)) return 'type';
  if (nonEmpty(filter.scopes) && !filter.scopes.includes(memory.scope)) return 'scope';
  if (nonEmpty(filter.relatedFiles) && !anySameFile(memory.relatedFiles, filter.relatedFiles)) {
    return 'related_files';
  }
  if (isStale(memory) && filter.stale === 'exclude') return 'stale';
  const { confidence } = presentMemory(memory, stale);
  if (filter.minConfidence !== undefined && confidence < filter.minConfidence) return 'confidence';
  if (filter.temporal && !memoryInTemporal(memory, filter.temporal)) return 'temporal';
  return null;
}

export type MemoryRejection =
  'out_of_scope' | 'type' | 'scope' | 'related_files' | 'stale' | 'confidence' | 'temporal';

export function memoryMatchesFilter(
  memory: Memory,
  filter: MemoryFilter,
  stale: StaleConfig,
): boolean {
  return memoryFilterRejection(memory, filter, stale) === null;
}

/**
 * A memory's place in time: a range matches when it was created inside it; a session set matches
 * when it was created in, or reinforced by, one of those sessions.
 */
export function memoryInTemporal(memory: Memory, constraint: TemporalConstraint): boolean {
  if (constraint.kind === 'range') return inRange(constraint, memory.createdAt);
  return inSessions(constraint, [memory.sessionId, ...memory.provenanceSessionIds]);
}

/** An episode matches a range it overlaps (an open episode runs until its start), or its session. */
export function episodeInTemporal(episode: Episode, constraint: TemporalConstraint): boolean {
  if (constraint.kind === 'sessions') return inSessions(constraint, [episode.sessionId]);
  return overlapsRange(constraint, episode.startedAt, episode.endedAt ?? episode.startedAt);
}

function nonEmpty<T>(list: readonly T[] | undefined): list is readonly T[] {
  return list !== undefined && list.length > 0;
}
