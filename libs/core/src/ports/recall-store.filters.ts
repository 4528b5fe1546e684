import { storedPathForms } from '../retrieval/file-paths';
import type { MemoryFilter } from '../retrieval/memory-filter';
import type { StoreFilter, StoreKeywordField } from './recall-store.port';
import type { TemporalConstraint } from '../retrieval/temporal';
import type { WorkStateAnchor } from '../retrieval/work-state-scope';

// The store filters of each tier, as recall and the rpcs beside it ask for them (the scope goes
// beside them in the query). They are a superset of the core's checks: whatever they let
// through, the core checks again.

/**
 * The core's MemoryFilter beyond its scope: types, scopes, stale exclusion, the stored
 * confidence (the core compares the presented, penalised one: a superset here) and time.
 * relatedFiles stays with the core: absolute and relative paths match by suffix there.
 */
export function memoryFilters(
  filter: Omit<MemoryFilter, 'tenantId' | 'projectId'>,
  temporal: TemporalConstraint | undefined,
): StoreFilter[] {
  const filters: StoreFilter[] = [];
  if (filter.types?.length) filters.push(anyOfFilter('memoryType', filter.types));
  if (filter.scopes?.length) filters.push(anyOfFilter('scope', filter.scopes));
  if (filter.stale === 'exclude') filters.push({ kind: 'missing', field: 'staleAt' });
  if (filter.minConfidence !== undefined) {
    filters.push({ kind: 'range', field: 'confidence', gte: filter.minConfidence });
  }
  if (temporal?.kind === 'range') {
    filters.push({ kind: 'range', field: 'createdAt', gte: temporal.fromMs, lte: temporal.toMs });
  } else if (temporal?.kind === 'sessions') {
    filters.push({
      kind: 'any',
      filters: [
        anyOfFilter('sessionId', temporal.sessionIds),
        anyOfFilter('provenanceSessionIds', temporal.sessionIds),
      ],
    });
  }
  return filters;
}

/** Episodes overlapping the range (an open one counts from its start), or of the sessions. */
export function episodeFilters(temporal: TemporalConstraint | undefined): StoreFilter[] {
  if (temporal?.kind === 'range') {
    return [
      { kind: 'range', field: 'startedAt', lte: temporal.toMs },
      {
        kind: 'any',
        filters: [
          { kind: 'range', field: 'endedAt', gte: temporal.fromMs },
          {
            kind: 'all',
            filters: [
              { kind: 'missing', field: 'endedAt' },
              { kind: 'range', field: 'startedAt', gte: temporal.fromMs },
            ],
          },
        ],
      },
    ];
  }
  if (temporal?.kind === 'sessions') return [anyOfFilter('sessionId', temporal.sessionIds)];
  return [];
}

/** User prompts typed in the range, or in the sessions. */
export function turnFilters(temporal: TemporalConstraint | undefined): StoreFilter[] {
  const filters: StoreFilter[] = [{ kind: 'term', field: 'source', value: 'user' }];
  if (temporal?.kind === 'range') {
    filters.push({ kind: 'range', field: 'timestamp', gte: temporal.fromMs, lte: temporal.toMs });
  } else if (temporal?.kind === 'sessions') {
    filters.push(anyOfFilter('sessionId', temporal.sessionIds));
  }
  return filters;
}

/**
 * The non-stale work_states a session's context may consider (issue #20): the session's own
 * (sessionId or provenance), those of its thread's and linked threads' episodes, and those of a
 * unit of work its thread works on (by the unit's innermost item; the core compares the whole
 * unit, workStateLink). Never the project's others.
 */
export function workStateFilters(anchor: WorkStateAnchor): StoreFilter[] {
  const episodeIds = [...anchor.threadEpisodeIds, ...anchor.linkedEpisodeIds];
  const unitItems = [...new Set(anchor.workUnits.map((u) => u.hierarchy[u.hierarchy.length - 1]))];
  return [
    anyOfFilter('memoryType', ['work_state']),
    { kind: 'missing', field: 'staleAt' },
    {
      kind: 'any',
      filters: [
        anyOfFilter('sessionId', [anchor.sessionId]),
        anyOfFilter('provenanceSessionIds', [anchor.sessionId]),
        ...(episodeIds.length > 0 ? [anyOfFilter('episodeId', episodeIds)] : []),
        ...(unitItems.length > 0 ? [anyOfFilter('workUnitRef.hierarchy', unitItems)] : []),
      ],
    },
  ];
}

/** Documents whose `relatedFiles` name any of the files (any stored form `sameFile` accepts). */
export function relatedFileFilter(...paths: string[]): StoreFilter {
  return anyOfFilter('relatedFiles', [...new Set(paths.flatMap(storedPathForms))]);
}

/** Documents whose `field` is one of `values` (an empty list matches nothing). */
export function anyOfFilter(field: StoreKeywordField, values: readonly string[]): StoreFilter {
  return { kind: 'terms', field, values: [...values] };
}
