import type { MappingProperty } from '@elastic/elasticsearch/lib/api/types';
import { MisconfigurationError, modelVector } from '@engram/core';
import { describe, expect, it } from 'vitest';
import { EVENT_FIXTURES } from '../../contracts/src/testing/event-fixtures';
import { episodeDocument, memoryDocument, turnDocument, withEmbedding } from '@engram/core';
import {
  RETRIEVAL_TIERS,
  retrievalIndexDefinition,
  retrievalIndexNames,
  retrievalMapping,
  type RetrievalTier,
} from './retrieval-indices';

const DIMS = 4;
const VECTOR = modelVector('model@1', [0.5, 0.5, 0.5, 0.5]);

/** Every field path of a JSON value (arrays are transparent, as in Elasticsearch). */
function fieldPaths(value: unknown, prefix = ''): string[] {
  if (Array.isArray(value)) return value.flatMap((item) => fieldPaths(item, prefix));
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, child]) => {
    const path = prefix === '' ? key : `${prefix}.${key}`;
    return [path, ...fieldPaths(child, path)];
  });
}

/** The mapped paths; below a disabled object anything goes. */
function mappedPaths(properties: Record<string, MappingProperty>, prefix = ''): string[] {
  return Object.entries(properties).flatMap(([key, property]) => {
    const path = prefix === '' ? key : `${prefix}.${key}`;
    if ('enabled' in property && property.enabled === false) return [path, `${path}.*`];
    const children = childrenOf(property);
    return children ? [path, ...mappedPaths(children, path)] : [path];
  });
}

function childrenOf(property: MappingProperty): Record<string, MappingProperty> | undefined {
  return (property as { properties?: Record<string, MappingProperty> }).properties;
}

function isMapped(path: string, mapped: readonly string[]): boolean {
  return mapped.some(
    (candidate) =>
      candidate === path || (candidate.endsWith('.*') && path.startsWith(candidate.slice(0, -1))),
  );
}

const FULL_DOCUMENTS: Record<RetrievalTier, object> = {
  memories: withEmbedding(memoryDocument(EVENT_FIXTURES.Memory).body, VECTOR),
  episodes: withEmbedding(episodeDocument(EVENT_FIXTURES.Episode).body, VECTOR),
  turns: withEmbedding(turnDocument(EVENT_FIXTURES.PromptSubmitted)!.body, VECTOR),
};

describe('retrievalIndexNames', () => {
  it('should name the three tiers and the access counters, under a lowercased prefix', () => {
    expect(retrievalIndexNames()).toEqual({
      memories: 'engram-memories',
      episodes: 'engram-episodes',
      turns: 'engram-turns',
      memoryAccess: 'engram-memory-access',
    });
    expect(retrievalIndexNames('Test-1.').memories).toBe('test-1.engram-memories');
  });

  it('should refuse a prefix that makes an invalid index name, naming the rule', () => {
    expect(() => retrievalIndexNames('_hidden')).toThrow(MisconfigurationError);
    expect(() => retrievalIndexNames('-x')).toThrow(/starting with a letter or digit/);
    expect(() => retrievalIndexNames('a b')).toThrow(/invalid index name/);
  });
});

describe('retrievalMapping', () => {
  it.each(RETRIEVAL_TIERS)(
    'should map every field a fully populated %s document has (the mapping is strict)',
    (tier) => {
      const mapping = retrievalMapping(tier, DIMS);
      expect(mapping.dynamic).toBe('strict');
      const mapped = mappedPaths(mapping.properties!);
      const unmapped = fieldPaths(FULL_DOCUMENTS[tier]).filter((p) => !isMapped(p, mapped));
      expect(unmapped).toEqual([]);
    },
  );

  it.each(RETRIEVAL_TIERS)(
    'should store the vector as cosine HNSW with its model and dimension beside it (%s)',
    (tier) => {
      const properties = retrievalMapping(tier, DIMS).properties!;
      expect(properties.embedding).toEqual({
        type: 'dense_vector',
        dims: DIMS,
        index: true,
        similarity: 'cosine',
        index_options: { type: 'hnsw', m: 16, ef_construction: 100 },
      });
      expect(properties.embeddingModel).toEqual({ type: 'keyword' });
      expect(properties.embeddingDims).toEqual({ type: 'integer' });
      expect(properties.text).toEqual({ type: 'text', analyzer: 'english' });
    },
  );

  it.each(RETRIEVAL_TIERS)(
    'should make every filter and provenance field a keyword (%s)',
    (tier) => {
      const properties = retrievalMapping(tier, DIMS).properties!;
      for (const field of ['tenantId', 'projectId', 'sessionId', 'eventId']) {
        expect(properties[field]).toEqual({ type: 'keyword' });
      }
      const provenance = childrenOf(properties.provenance)!;
      expect(Object.keys(provenance).sort()).toEqual(
        [
          'commitSha',
          'episodeIds',
          'eventIds',
          'memoryId',
          'projectId',
          'promptIds',
          'sessionIds',
          'tenantId',
        ].sort(),
      );
      expect(provenance.promptIds).toEqual({ type: 'long' });
    },
  );

  it('should make the memory filters keywords and its dates dates', () => {
    const p = retrievalMapping('memories', DIMS).properties!;
    for (const field of ['memoryType', 'scope', 'source', 'episodeId', 'sourceEventIds']) {
      expect(p[field]).toEqual({ type: 'keyword' });
    }
    for (const field of ['tags', 'relatedFiles', 'relatedModules']) {
      expect(p[field]).toMatchObject({ type: 'keyword', ignore_above: 1024 });
    }
    for (const field of ['createdAt', 'lastAccessedAt', 'staleAt', 'timestamp']) {
      expect(p[field]).toEqual({ type: 'date' });
    }
  });

  it('should refuse an impossible dimension', () => {
    expect(() => retrievalMapping('memories', 0)).toThrow(MisconfigurationError);
    expect(() => retrievalMapping('memories', 1.5)).toThrow(/dimension/);
  });

  it('should record the tier, mapping version and dimension in _meta', () => {
    expect(retrievalMapping('turns', 384)._meta).toEqual({
      engram: { tier: 'turns', mappingVersion: 1, embeddingDims: 384 },
    });
  });

  it.each(RETRIEVAL_TIERS)(
    'should index the %s vector for kNN but keep it in _source only packed',
    (tier) => {
      const mapping = retrievalMapping(tier, DIMS);
      expect(mapping._source).toEqual({ excludes: ['embedding'] });
      expect(mapping.properties!.embedding).toMatchObject({ type: 'dense_vector', index: true });
      expect(mapping.properties!.embeddingPacked).toEqual({ type: 'binary' });
    },
  );
});

describe('retrievalIndexDefinition', () => {
  it('should use one shard and a replica only where a second node exists', () => {
    expect(retrievalIndexDefinition('episodes', { dims: 384 }).settings).toEqual({
      number_of_shards: 1,
      auto_expand_replicas: '0-1',
    });
    expect(retrievalIndexDefinition('episodes', { dims: 384, shards: 3 }).settings).toMatchObject({
      number_of_shards: 3,
    });
  });
});
