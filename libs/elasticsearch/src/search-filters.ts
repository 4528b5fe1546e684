import type { QueryDslQueryContainer } from '@elastic/elasticsearch/lib/api/types';
import type { ModelVector, RecallScope, StoreFilter } from '@engram/core';

// The core's neutral store filters compiled to query DSL filter clauses. Filters here are a
// superset of the core's: whatever they let through, the core checks again.

export type Filter = QueryDslQueryContainer;

/** Tenant and project: on every query, never optional (SPEC §11). */
export function scopeFilter(scope: RecallScope): Filter[] {
  return [{ term: { tenantId: scope.tenantId } }, { term: { projectId: scope.projectId } }];
}

/** kNN compares only vectors of the query's model and dimension (a query never mixes models). */
export function sameModelFilter(vector: ModelVector): Filter[] {
  return [
    { term: { embeddingModel: vector.model } },
    { term: { embeddingDims: vector.dimension } },
  ];
}

/** One neutral store filter as query DSL. */
export function dslFilter(filter: StoreFilter): Filter {
  switch (filter.kind) {
    case 'term':
      return { term: { [filter.field]: filter.value } };
    case 'terms':
      return { terms: { [filter.field]: [...filter.values] } };
    case 'range':
      return {
        range: {
          [filter.field]: {
            ...(filter.gte !== undefined && { gte: filter.gte }),
            ...(filter.lte !== undefined && { lte: filter.lte }),
          },
        },
      };
    case 'missing':
      return { bool: { must_not: [{ exists: { field: filter.field } }] } };
    case 'flag':
      // false as "not true": a document without the field counts as false.
      return filter.value
        ? { term: { [filter.field]: true } }
        : { bool: { must_not: [{ term: { [filter.field]: true } }] } };
    case 'all': {
      // Missing fields as `must_not: exists`, the rest as `filter`.
      const missing = filter.filters.flatMap((f) =>
        f.kind === 'missing' ? [{ exists: { field: f.field } }] : [],
      );
      const rest = filter.filters.filter((f) => f.kind !== 'missing').map(dslFilter);
      return {
        bool: {
          ...(missing.length > 0 && { must_not: missing }),
          ...(rest.length > 0 && { filter: rest }),
        },
      };
    }
    case 'any':
      return { bool: { should: filter.filters.map(dslFilter), minimum_should_match: 1 } };
  }
}

/** A store query's scope and filters as the query DSL's filter clauses, scope first. */
export function dslFilters(scope: RecallScope, filters: readonly StoreFilter[]): Filter[] {
  return [...scopeFilter(scope), ...filters.map(dslFilter)];
}
