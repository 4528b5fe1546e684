import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { anyOfFilter, type StoreFilter } from '@engram/core';
import { afterEach, describe, expect, it } from 'vitest';
import { compileFilter, UnsupportedFilterError } from './sqlite-retrieval-filter';
import { ftsQuery } from './sqlite-retrieval-query-text';
import { SqliteRetrievalStore } from './sqlite-retrieval-store';

// Store-level rules; the RecallStore behaviour itself is the contract suite
// (apps/retrieval/src/sqlite-backend.spec.ts here, Elasticsearch in the integration tier).

const SCOPE = { tenantId: 'acme', projectId: 'api' };

describe('ftsQuery', () => {
  it("should OR the query's words, quoted, without English stop words", () => {
    expect(ftsQuery('How do we fake time in the refresh tests?')).toBe(
      '"how" OR "do" OR "we" OR "fake" OR "time" OR "refresh" OR "tests"',
    );
  });

  it('should never pass FTS5 syntax through, and give null when no word is left', () => {
    expect(ftsQuery('NEAR(a b) AND text:* "x')).toBe('"near" OR "b" OR "text" OR "x"');
    expect(ftsQuery('the … of ?')).toBeNull();
  });
});

describe('compileFilter', () => {
  it('should require tenant and project, and say when the filter is scope only', () => {
    expect(() => compileFilter({ tenantId: 'acme', projectId: '' }, [])).toThrow(
      UnsupportedFilterError,
    );
    expect(compileFilter(SCOPE, [])).toMatchObject({
      scope: { tenantId: 'acme', projectId: 'api' },
      scopeOnly: true,
      params: ['acme', 'api'],
    });
    expect(compileFilter(SCOPE, [anyOfFilter('memoryType', ['gotcha'])]).scopeOnly).toBe(false);
  });

  it('should refuse what it does not translate instead of matching everything', () => {
    const unknown = { kind: 'match', field: 'text', value: 'x' } as unknown as StoreFilter;
    expect(() => compileFilter(SCOPE, [unknown])).toThrow(/"match"/);
    const injected = { kind: 'term', field: "a') OR 1=1 --", value: 'x' } as unknown as StoreFilter;
    expect(() => compileFilter(SCOPE, [injected])).toThrow(/not a name/);
    const dotted = { kind: 'term', field: 'workUnitRef..x', value: 'x' } as unknown as StoreFilter;
    expect(() => compileFilter(SCOPE, [dotted])).toThrow(/not a name/);
  });

  it('should read a nested field by its dotted path', () => {
    const compiled = compileFilter(SCOPE, [anyOfFilter('workUnitRef.hierarchy', ['story_3_2'])]);
    expect(compiled.params).toEqual(['acme', 'api', '$.workUnitRef.hierarchy', 'story_3_2']);
  });
});

describe('SqliteRetrievalStore', () => {
  const dirs: string[] = [];
  afterEach(() => dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  const doc = (id: string, vector: number[]) => ({
    action: 'index' as const,
    index: 'memories',
    id,
    document: {
      tenantId: 'acme',
      projectId: 'api',
      text: `memory ${id}`,
      embedding: vector,
      embeddingModel: 'm@1',
      embeddingDims: vector.length,
    },
  });
  const query = { text: 'zzz', vector: { model: 'm@1', dimension: 2, vector: [1, 0] } };

  it("should see another connection's writes in its kNN scan (no stale vector cache)", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'engram-retrieval-'));
    dirs.push(dir);
    const reader = SqliteRetrievalStore.open({ dataDir: dir });
    const writer = SqliteRetrievalStore.open({ dataDir: dir });
    try {
      writer.write([doc('a', [1, 0])]);
      const search = () =>
        reader.candidates('memories', { ...query, scope: SCOPE, filter: [], size: 5 });
      expect((await search()).knn?.map((hit) => hit.id)).toEqual(['a']);
      writer.write([doc('b', [0.9, 0.1])]);
      expect((await search()).knn?.map((hit) => hit.id)).toEqual(['a', 'b']);
      expect(writer.write([{ action: 'delete', index: 'memories', id: 'a' }])).toEqual(['deleted']);
      expect((await search()).knn?.map((hit) => hit.id)).toEqual(['b']);
      expect(reader.counts()).toEqual({ memories: 1, episodes: 0, turns: 0 });
    } finally {
      reader.close();
      writer.close();
    }
  });

  it("should keep a memory's access counts across its next versions (issue #20 renames)", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'engram-retrieval-'));
    dirs.push(dir);
    const store = SqliteRetrievalStore.open({ dataDir: dir });
    try {
      const version = (relatedFiles: string[], accessCount: number) => ({
        ...doc('m', [1, 0]),
        document: { ...doc('m', [1, 0]).document, relatedFiles, accessCount, lastAccessedAt: 5 },
      });
      store.write([version(['src/a.ts'], 0)]);
      const hit = { ...SCOPE, memoryId: 'm', increment: 3, lastAccessedAt: 9, firstRecordedAt: 9 };
      expect(await store.writeAccess([hit])).toEqual({ failed: [] });
      store.write([version(['src/b.ts'], 1)]);
      const [listed] = await store.list<Record<string, unknown>>('memories', {
        scope: SCOPE,
        filter: [],
        size: 1,
      });
      expect(listed.source).toMatchObject({
        relatedFiles: ['src/b.ts'],
        accessCount: 3,
        lastAccessedAt: 9,
      });
      // Deleted and written again: a new memory, uncounted.
      store.write([{ action: 'delete', index: 'memories', id: 'm' }, version(['src/b.ts'], 0)]);
      const [again] = await store.list<Record<string, unknown>>('memories', {
        scope: SCOPE,
        filter: [],
        size: 1,
      });
      expect(again.source).toMatchObject({ accessCount: 0 });
    } finally {
      store.close();
    }
  });

  it('should refuse an operation on something that is not a tier', () => {
    const dir = mkdtempSync(join(tmpdir(), 'engram-retrieval-'));
    dirs.push(dir);
    const store = SqliteRetrievalStore.open({ dataDir: dir });
    try {
      expect(() => store.write([{ action: 'delete', index: 'engram-memories', id: 'x' }])).toThrow(
        /not a retrieval tier/,
      );
    } finally {
      store.close();
    }
  });
});
