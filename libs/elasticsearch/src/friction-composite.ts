import type { Client } from '@elastic/elasticsearch';
import type {
  AggregationsAggregationContainer,
  AggregationsCompositeAggregationSource,
} from '@elastic/elasticsearch/lib/api/types';
import { classifyElasticsearchError } from './elasticsearch-client';
import type { FrictionScope, FrictionWindow } from '@engram/core';
import type { Filter } from './search-filters';

/** A composite bucket: its key and its sub-aggregations' answers. */
export interface CompositeBucket<K> {
  key: K;
  doc_count: number;
  [aggregation: string]: unknown;
}

/**
 * The buckets of a composite aggregation over `query`, `pageSize` at a time, following its
 * `after` key until a page comes back empty: Elasticsearch groups, the process sees one page.
 */
export async function* compositePages<K>(
  client: Client,
  index: string,
  query: Filter,
  sources: Record<string, AggregationsCompositeAggregationSource>[],
  pageSize: number,
  aggs: Record<string, AggregationsAggregationContainer> = {},
): AsyncGenerator<CompositeBucket<K>[]> {
  let after: Record<string, unknown> | undefined;
  for (;;) {
    let response;
    try {
      response = await client.search({
        index,
        ignore_unavailable: true,
        size: 0,
        query,
        aggs: {
          groups: {
            composite: {
              size: pageSize,
              sources,
              ...(after && { after: after }),
            },
            ...(Object.keys(aggs).length > 0 && { aggs }),
          },
        },
      });
    } catch (error) {
      throw classifyElasticsearchError(error);
    }
    const groups = response.aggregations?.groups as
      { buckets: CompositeBucket<K>[]; after_key?: Record<string, unknown> } | undefined;
    const buckets = groups?.buckets ?? [];
    if (buckets.length > 0) yield buckets;
    if (buckets.length < pageSize || !groups?.after_key) return;
    after = groups.after_key;
  }
}

/** A terms source on a keyword (or numeric) field. */
export const termsSource = (field: string): AggregationsCompositeAggregationSource => ({
  terms: { field },
});

/** The UTC day of `timestamp`, as `YYYY-MM-DD` (the embedded `date(at / 1000, 'unixepoch')`). */
export const daySource: AggregationsCompositeAggregationSource = {
  date_histogram: { field: 'timestamp', calendar_interval: '1d', format: 'yyyy-MM-dd' },
};

/** The scope as term filters (tenant and project are keywords of every retrieval document). */
export function frictionScopeFilters(scope: FrictionScope): Filter[] {
  switch (scope.kind) {
    case 'all':
      return [];
    case 'tenant':
      return [{ term: { tenantId: scope.tenantId } }];
    case 'project':
      return [
        { term: { projectId: scope.projectId } },
        ...(scope.tenantId === null ? [] : [{ term: { tenantId: scope.tenantId } }]),
      ];
  }
}

/** [from, to) on a date field. */
export function inWindow(field: string, window: FrictionWindow): Filter {
  return { range: { [field]: { gte: window.from, lt: window.to, format: 'epoch_millis' } } };
}
