import {
  anyOfFilter,
  episodeFilters,
  memoryFilters,
  relatedFileFilter,
  turnFilters,
} from '@engram/elasticsearch';
import type { ContractFilters } from '../../../../libs/core/src/ports/testing/recall-store.contract';

/**
 * The filters the RecallStore contract passes, built as RecallService builds them: the
 * Elasticsearch query DSL, which the embedded SQLite store also reads. Both stores' contract
 * runs use this one set.
 */
export const DSL_CONTRACT_FILTERS: ContractFilters = {
  memories: memoryFilters,
  episodes: episodeFilters,
  turns: turnFilters,
  relatedFile: relatedFileFilter,
  anyOf: anyOfFilter,
};
