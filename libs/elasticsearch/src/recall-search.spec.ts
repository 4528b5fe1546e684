import {
  anyOfFilter,
  episodeFilters as storeEpisodeFilters,
  memoryFilters as storeMemoryFilters,
  modelVector,
  relatedFileFilter,
  turnFilters as storeTurnFilters,
  type MemoryFilter,
  type RecallScope,
  type TemporalConstraint,
  workStateFilters,
} from '@engram/core';
import { describe, expect, it } from 'vitest';
import { episodeFromSource, vectorOfSource } from '@engram/core';
import {
  knnSimilarity,
  lexicalSearchBody,
  numCandidates,
  semanticSearchBody,
} from './recall-search';
import { dslFilter, dslFilters, sameModelFilter, scopeFilter } from './search-filters';

// The core's store filters of each tier, compiled: the query DSL recall sent before the filters
// were neutral, clause for clause.
const memoryFilters = (filter: MemoryFilter, temporal: TemporalConstraint | undefined) =>
  dslFilters(filter, storeMemoryFilters(filter, temporal));
const episodeFilters = (scope: RecallScope, temporal: TemporalConstraint | undefined) =>
  dslFilters(scope, storeEpisodeFilters(temporal));
const turnFilters = (scope: RecallScope, temporal: TemporalConstraint | undefined) =>
  dslFilters(scope, storeTurnFilters(temporal));

const SCOPE = { tenantId: 'acme', projectId: 'api' };
const SCOPED = [{ term: { tenantId: 'acme' } }, { term: { projectId: 'api' } }];

describe('recall filters', () => {
  it('should always scope by tenant and project', () => {
    expect(scopeFilter(SCOPE)).toEqual(SCOPED);
    expect(memoryFilters(SCOPE, undefined)).toEqual(SCOPED);
    expect(episodeFilters(SCOPE, undefined)).toEqual(SCOPED);
    expect(turnFilters(SCOPE, undefined)).toEqual([...SCOPED, { term: { source: 'user' } }]);
  });

  it("should translate the core's memory filter: types, scopes, stale, confidence, time", () => {
    expect(
      memoryFilters(
        {
          ...SCOPE,
          types: ['gotcha', 'dead_end'],
          scopes: ['module'],
          stale: 'exclude',
          minConfidence: 0.65,
          relatedFiles: ['src/a.ts'],
        },
        { kind: 'range', fromMs: 10, toMs: 20 },
      ),
    ).toEqual([
      ...SCOPED,
      { terms: { memoryType: ['gotcha', 'dead_end'] } },
      { terms: { scope: ['module'] } },
      { bool: { must_not: [{ exists: { field: 'staleAt' } }] } },
      { range: { confidence: { gte: 0.65 } } },
      { range: { createdAt: { gte: 10, lte: 20 } } },
    ]);
  });

  it('should match a memory of the sessions it was created in or reinforced by', () => {
    expect(memoryFilters(SCOPE, { kind: 'sessions', sessionIds: ['s1'] }).slice(2)).toEqual([
      {
        bool: {
          should: [{ terms: { sessionId: ['s1'] } }, { terms: { provenanceSessionIds: ['s1'] } }],
          minimum_should_match: 1,
        },
      },
    ]);
  });

  it('should match episodes overlapping a range, open ones from their start', () => {
    const [startedBefore, endedAfter] = episodeFilters(SCOPE, {
      kind: 'range',
      fromMs: 10,
      toMs: 20,
    }).slice(2);
    expect(startedBefore).toEqual({ range: { startedAt: { lte: 20 } } });
    expect(endedAfter).toEqual({
      bool: {
        should: [
          { range: { endedAt: { gte: 10 } } },
          {
            bool: {
              must_not: [{ exists: { field: 'endedAt' } }],
              filter: [{ range: { startedAt: { gte: 10 } } }],
            },
          },
        ],
        minimum_should_match: 1,
      },
    });
    expect(turnFilters(SCOPE, { kind: 'range', fromMs: 1, toMs: 2 }).at(-1)).toEqual({
      range: { timestamp: { gte: 1, lte: 2 } },
    });
  });

  it('should filter by session, by id and by related file as terms', () => {
    expect(episodeFilters(SCOPE, { kind: 'sessions', sessionIds: ['s1'] }).at(-1)).toEqual({
      terms: { sessionId: ['s1'] },
    });
    expect(dslFilter(anyOfFilter('memoryId', ['m1', 'm2']))).toEqual({
      terms: { memoryId: ['m1', 'm2'] },
    });
    expect(dslFilter(relatedFileFilter('src/a.ts'))).toEqual({
      terms: { relatedFiles: ['src/a.ts'] },
    });
  });

  it("should keep a session's work states to its own, its thread's and its work unit's", () => {
    const anchor = {
      sessionId: 's1',
      threadId: 't1',
      threadEpisodeIds: ['e1'],
      linkedEpisodeIds: ['e9'],
      workUnits: [{ methodology: 'bmad', hierarchy: ['epic_3', 'story_3_2'], label: 'S3.2' }],
    };
    expect(dslFilters(SCOPE, workStateFilters(anchor))).toEqual([
      ...SCOPED,
      { terms: { memoryType: ['work_state'] } },
      { bool: { must_not: [{ exists: { field: 'staleAt' } }] } },
      {
        bool: {
          should: [
            { terms: { sessionId: ['s1'] } },
            { terms: { provenanceSessionIds: ['s1'] } },
            { terms: { episodeId: ['e1', 'e9'] } },
            // the nested keyword of the memories mapping (retrieval-indices.ts)
            { terms: { 'workUnitRef.hierarchy': ['story_3_2'] } },
          ],
          minimum_should_match: 1,
        },
      },
    ]);
    const alone = { ...anchor, threadEpisodeIds: [], linkedEpisodeIds: [], workUnits: [] };
    expect(dslFilter(workStateFilters(alone)[2])).toEqual({
      bool: {
        should: [{ terms: { sessionId: ['s1'] } }, { terms: { provenanceSessionIds: ['s1'] } }],
        minimum_should_match: 1,
      },
    });
    expect(dslFilter(anyOfFilter('threadId', ['t1']))).toEqual({ terms: { threadId: ['t1'] } });
  });

  it('should compare only vectors of the query model and dimension', () => {
    expect(sameModelFilter(modelVector('minilm@1', [0.1, 0.2, 0.3]))).toEqual([
      { term: { embeddingModel: 'minilm@1' } },
      { term: { embeddingDims: 3 } },
    ]);
  });

  it('should search BM25 on text and kNN on the embedding, both with the same filters', () => {
    const query = {
      index: 'mem',
      text: 'token refresh',
      vector: modelVector('minilm@1', [0.6, 0.8]),
      filter: SCOPED,
      size: 30,
      minSimilarity: 0.2,
    };
    expect(lexicalSearchBody(query)).toEqual({
      size: 30,
      track_total_hits: false,
      query: { bool: { must: [{ match: { text: { query: 'token refresh' } } }], filter: SCOPED } },
    });
    expect(semanticSearchBody(query, query.vector)).toEqual({
      size: 30,
      track_total_hits: false,
      _source: { excludes: ['embedding', 'embeddingPacked'] },
      // A knn query (k = size), not the top-level section: no separate DFS round.
      query: {
        knn: {
          field: 'embedding',
          query_vector: [0.6, 0.8],
          num_candidates: 120,
          similarity: 0.2,
          filter: [
            ...SCOPED,
            { term: { embeddingModel: 'minilm@1' } },
            { term: { embeddingDims: 2 } },
          ],
        },
      },
    });
    expect(
      semanticSearchBody({ ...query, minSimilarity: undefined }, query.vector).query?.knn,
    ).not.toHaveProperty('similarity');
  });

  it("should read a kNN hit's cosine from its (1 + cos) / 2 score", () => {
    expect(knnSimilarity(1)).toBe(1);
    expect(knnSimilarity(0.8)).toBeCloseTo(0.6, 12);
    expect(knnSimilarity(0.5)).toBe(0);
    expect(knnSimilarity(-0.0000001)).toBe(-1);
  });

  it('should explore more HNSW candidates than it returns, within bounds', () => {
    expect(numCandidates(10)).toBe(100);
    expect(numCandidates(90)).toBe(360);
    expect(numCandidates(5000)).toBe(10_000);
  });
});

describe('documents back to records', () => {
  it('should strip the search fields and keep the vector apart', () => {
    const source = {
      episodeId: 'e1',
      text: 'searched text',
      provenance: {},
      embedding: [0.5, 0.5],
      embeddingModel: 'minilm@1',
      embeddingDims: 2,
    };
    expect(episodeFromSource(source as never)).toEqual({ episodeId: 'e1' });
    expect(vectorOfSource(source)).toEqual({ model: 'minilm@1', dimension: 2, vector: [0.5, 0.5] });
    expect(vectorOfSource({ embedding: null, embeddingModel: null })).toBeNull();
  });
});
