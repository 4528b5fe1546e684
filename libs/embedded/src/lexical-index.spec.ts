import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { anyOfFilter, type StoreCandidateQuery, type StoreFilter } from '@engram/core';
import { afterEach, describe, expect, it } from 'vitest';
import type { LexicalIndexOptions } from './lexical-index';
import { fts5Totals, LexicalPostings, lexicalScope } from './lexical-postings';
import { SqliteRetrievalStore, type RetrievalStoreOperation } from './sqlite-retrieval-store';

const ACME = lexicalScope('acme', 'api');

function doc(rid: number, text: string, scope = ACME) {
  const terms = new Map<string, number>();
  for (const term of text.split(' ')) terms.set(term, (terms.get(term) ?? 0) + 1);
  return { rid, id: `d${rid}`, scope, terms, length: text.split(' ').length };
}

describe('LexicalPostings', () => {
  it('should rank by score, ties by id, within the scope only', () => {
    const index = new LexicalPostings();
    index.add(doc(1, 'kafka consumer lag'));
    index.add(doc(2, 'kafka kafka consumer')); // twice: scores higher
    index.add(doc(3, 'postgres pool'));
    index.add(doc(4, 'kafka consumer lag')); // same as d1: tie, id order
    index.add(doc(5, 'kafka broker', lexicalScope('other', 'api')));
    const hits = index.search(['kafka'], ACME).top(10);
    expect(hits.map((hit) => hit.id)).toEqual(['d2', 'd1', 'd4']);
    expect(hits[1].score).toBe(hits[2].score);
    expect(
      index
        .search(['kafka'], ACME)
        .top(2)
        .map((hit) => hit.id),
    ).toEqual(['d2', 'd1']);
    expect(index.search(['kafka'], lexicalScope('nobody', 'x')).top(10)).toEqual([]);
    // Statistics are the whole index's (FTS5's): the other scope's document counts in N and df.
    expect(index.documents).toBe(5);
    expect(index.documentFrequency('kafka')).toBe(4);
  });

  it('should forget a removed or replaced document, in the scores and the statistics', () => {
    const index = new LexicalPostings();
    index.add(doc(1, 'kafka consumer'));
    index.add(doc(2, 'kafka'));
    index.add(doc(1, 'postgres pool')); // replaces d1
    expect(
      index
        .search(['kafka'], ACME)
        .top(10)
        .map((hit) => hit.id),
    ).toEqual(['d2']);
    expect(index.documentFrequency('kafka')).toBe(1);
    index.remove(2);
    index.remove(2);
    expect(index.search(['kafka'], ACME).top(10)).toEqual([]);
    expect(index.documents).toBe(1);
  });

  it('should rank the same after compaction renumbers the slots', () => {
    const index = new LexicalPostings();
    const fresh = new LexicalPostings();
    for (let rid = 1; rid <= 1_500; rid += 1) {
      const text = `word${rid % 7} word${rid % 11} common`;
      index.add(doc(rid, text));
      if (rid > 1_100) fresh.add(doc(rid, text));
    }
    for (let rid = 1; rid <= 1_100; rid += 1) index.remove(rid);
    index.compactIfDue();
    const query = ['word3', 'word5', 'common'];
    expect(index.search(query, ACME).top(50)).toEqual(fresh.search(query, ACME).top(50));
    expect(index.documentFrequency('common')).toBe(400);
  });
});

describe('fts5Totals', () => {
  it("should read FTS5's averages record: rows, then each column's tokens, as varints", () => {
    expect(fts5Totals(Uint8Array.from([4, 24]))).toEqual({ rows: 4, tokens: 24 });
    // 100,000 = 0x86 0x8d 0x20 and 1,753,300 = 0xeb 0x81 0x54 in 7-bit groups; two columns.
    expect(fts5Totals(Uint8Array.from([0x86, 0x8d, 0x20, 0xeb, 0x81, 0x54, 1]))).toEqual({
      rows: 100_000,
      tokens: 1_753_301,
    });
    expect(fts5Totals(Uint8Array.from([4]))).toBeNull();
    expect(fts5Totals(undefined)).toBeNull();
  });
});

describe('SqliteRetrievalStore BM25 from in-memory postings', () => {
  const dirs: string[] = [];
  const stores: SqliteRetrievalStore[] = [];
  afterEach(() => {
    stores.splice(0).forEach((store) => store.close());
    dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true }));
  });

  const open = (dir: string, lexicalIndex: LexicalIndexOptions) => {
    const store = SqliteRetrievalStore.open({ dataDir: dir, lexicalIndex });
    stores.push(store);
    return store;
  };
  const newDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'engram-lexical-'));
    dirs.push(dir);
    return dir;
  };
  const memory = (
    id: string,
    text: string,
    extra: Record<string, unknown> = {},
  ): RetrievalStoreOperation => ({
    action: 'index',
    index: 'memories',
    id,
    document: { tenantId: 'acme', projectId: 'api', memoryType: 'gotcha', text, ...extra },
  });
  const SCOPE = { tenantId: 'acme', projectId: 'api' };
  const scope: StoreFilter[] = [];
  const search = (
    store: SqliteRetrievalStore,
    text: string,
    filter: StoreFilter[] = scope,
    size = 5,
  ) =>
    store
      .candidates('memories', {
        scope: SCOPE,
        text,
        vector: null,
        filter,
        size,
      } satisfies StoreCandidateQuery)
      .then((found) => found.bm25);

  const CORPUS: RetrievalStoreOperation[] = [
    memory('m1', 'the kafka consumer lags behind after a rebalance'),
    memory('m2', 'Kafka consumers: commit offsets after the handler, consumer by consumer'),
    memory('m3', 'postgres pool exhausted under load; raise the pool size', {
      memoryType: 'decision',
    }),
    memory('m4', 'the kafka consumer lags behind after a rebalance'),
    memory('m5', ''),
    memory('m6', 'retry the kafka producer with backoff', { memoryType: 'decision' }),
    {
      action: 'index',
      index: 'memories',
      id: 'm7',
      document: { tenantId: 'other', projectId: 'api', text: 'kafka consumer, another tenant' },
    },
    memory(
      'm8',
      'a long memory about running consumers and running producers on kafka clusters, '.repeat(3),
    ),
  ];

  it("should give FTS5's hits, order and scores, also after updates, deletes and with filters", async () => {
    const dir = newDir();
    const writer = open(dir, { build: 'never' });
    writer.write(CORPUS);
    writer.write([
      memory('m1', 'the kafka consumer lags far behind after every rebalance'),
      { action: 'delete', index: 'memories', id: 'm6' },
    ]);
    const fts = open(dir, { build: 'never' });
    const inMemory = open(dir, { build: 'always' });
    const decisions = [anyOfFilter('memoryType', ['decision'])];
    for (const [text, filter] of [
      ['kafka consumer', scope],
      ['why does the consumer lag after a rebalance?', scope],
      ['running producers', scope],
      ['pool postgres kafka', scope],
      ['pool postgres kafka', decisions],
      ['nothing matches this', scope],
    ] as const) {
      const expected = await search(fts, text, [...filter]);
      const got = await search(inMemory, text, [...filter]);
      expect(got.map((hit) => hit.id)).toEqual(expected.map((hit) => hit.id));
      got.forEach((hit, i) => expect(hit.score).toBeCloseTo(expected[i].score ?? NaN, 12));
    }
    expect(inMemory.lexicalInMemory('memories')).toBe(true);
    expect(fts.lexicalInMemory('memories')).toBe(false);
  });

  it("should see another connection's writes (the change log, replayed)", async () => {
    const dir = newDir();
    const writer = open(dir, { build: 'never' });
    const reader = open(dir, { build: 'always' });
    const fts = open(dir, { build: 'never' });
    writer.write([memory('a', 'kafka consumer lag'), memory('b', 'postgres pool')]);
    expect((await search(reader, 'kafka postgres')).map((hit) => hit.id).sort()).toEqual([
      'a',
      'b',
    ]);
    expect(reader.lexicalInMemory('memories')).toBe(true);
    writer.write([
      memory('a', 'kafka consumer lag, kafka again'),
      memory('c', 'postgres replica'),
      { action: 'delete', index: 'memories', id: 'b' },
    ]);
    const got = await search(reader, 'kafka postgres');
    expect(got.map((hit) => hit.id).sort()).toEqual(['a', 'c']);
    expect(got).toEqual(await search(fts, 'kafka postgres'));
    // A backlog larger than a quarter of the tier (a re-index) is read afresh, same answer.
    writer.write(
      Array.from({ length: 1_500 }, (_, i) => memory(`r${i}`, `kafka replica ${i % 13}`)),
    );
    const afterBacklog = await search(reader, 'kafka postgres replica', scope, 20);
    expect(afterBacklog).toHaveLength(20);
    expect(afterBacklog).toEqual(await search(fts, 'kafka postgres replica', scope, 20));
  });

  it('should leave a word FTS5 splits into several tokens (a phrase) to FTS5', async () => {
    const dir = newDir();
    const store = open(dir, { build: 'always' });
    store.write([memory('adjacent', 'ab cd'), memory('apart', 'cd then ab')]);
    // U+19B0 is a letter to JavaScript and a separator to FTS5's unicode61: "ab cd", a phrase.
    expect((await search(store, 'ab\u19b0cd')).map((hit) => hit.id)).toEqual(['adjacent']);
  });

  it('should build the postings once FTS5 queries have cost what the build is expected to', async () => {
    const dir = newDir();
    const never = open(dir, { build: 'auto', buildMsPerDocument: 1e9 });
    const soon = open(dir, { build: 'auto', buildMsPerDocument: 0 });
    never.write([memory('a', 'kafka consumer lag')]);
    for (const store of [never, soon]) {
      expect(store.lexicalInMemory('memories')).toBe(false);
      expect((await search(store, 'kafka')).map((hit) => hit.id)).toEqual(['a']);
    }
    expect(never.lexicalInMemory('memories')).toBe(false);
    expect(soon.lexicalInMemory('memories')).toBe(true);
    expect((await search(soon, 'kafka')).map((hit) => hit.id)).toEqual(['a']);
    never.warmLexical('memories');
    expect(never.lexicalInMemory('memories')).toBe(true);
  });

  it('should not search for a word in half the documents or more, from 10,000 documents', async () => {
    const dir = newDir();
    const fts = open(dir, { build: 'never' });
    const inMemory = open(dir, { build: 'always' });
    const operations = Array.from({ length: 10_000 }, (_, i) =>
      memory(`m${i}`, i < 3 ? `common rare word${i}` : `common word${i}`),
    );
    fts.write(operations);
    for (const store of [fts, inMemory]) {
      // "common" is in every memory: only the three with "rare" come back, not 30.
      const hits = await search(store, 'common rare', scope, 30);
      expect(hits.map((hit) => hit.id)).toEqual(['m0', 'm1', 'm2']);
      // A query of common words alone still finds what it did.
      expect(await search(store, 'common', scope, 30)).toHaveLength(30);
    }
  }, 60_000);
});
