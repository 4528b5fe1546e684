import { createEmbedder, type Embedder } from '@engram/ai';
import { errorMessage } from '@engram/core';
import { SqliteRetrievalStore, type RetrievalStoreOperation } from '@engram/embedded';
import { memoryDocument, withEmbedding } from '@engram/core';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { RecallService } from '@engram/app-retrieval';
import {
  CORPUS_DESCRIPTION,
  DIMS,
  lookupEmbedder,
  MODEL,
  PROJECT,
  syntheticRecallCorpus,
  TENANT,
  type RecallCorpus,
} from './bench-recall-corpus';
import { percentile, timed, type Latency } from './bench-recall-latency';

// `engram bench recall --embedded`: RecallService (the real ranking path) on the SQLite store at
// several corpus sizes, with kNN on the ANN graph and, as the reference, on the exact scan.
// The corpus (bench-recall-corpus.ts) is synthetic, with clustered vectors; the real model's query
// embedding time is measured on its own and reported beside the search figures.
// `--distributed` is in bench-recall-distributed.ts.

/** Warm-up queries before each measured run of the embedded bench (JIT, connections, caches). */
const WARMUP_QUERIES = 10;

export interface RecallSizeBench {
  memories: number;
  writeSeconds: number;
  /** First query of the ANN store: the graph built from SQLite and written to its file. */
  indexBuildSeconds: number;
  indexFileMb: number;
  /** `engram recall`'s path after a restart: the graph file memory-mapped, first query. */
  indexReopenMs: number;
  /**
   * BM25's in-memory postings built from the FTS5 index (what a long-running process does once
   * its FTS5 queries have cost as much; done before measuring, like the graph).
   */
  lexicalBuildSeconds: number;
  /** A whole recall (RecallService: BM25 + kNN candidates, fusion, ranking), ANN kNN. */
  ann: Latency;
  /** The same recalls with kNN on the exact scan (the store before the ANN graph). */
  exact: Latency;
  /** The store's candidate searches alone: kNN only (ANN and exact), BM25 only. */
  knnAnn: Latency;
  knnExact: Latency;
  /** BM25 from the in-memory postings (a warm process). */
  bm25: Latency;
  /** BM25 on FTS5 alone (a hook or a one-shot `engram recall`, which never build the postings). */
  bm25Fts: Latency;
  /** Share of the exact kNN top 10 that the ANN kNN top 10 finds. */
  knnRecallAt10: number;
  /** Share of the final top 10 (after fusion and ranking) that the ANN run shares with exact. */
  resultOverlapAt10: number;
  rssMb: number;
}

export interface RecallBench {
  benchmark: 'recall';
  mode: 'embedded';
  queries: number;
  corpus: string;
  sizes: RecallSizeBench[];
  /** The real model's query embedding (per query), or why it was not measured. */
  queryEmbedding: { model: string; p50: number; p99: number } | { unavailable: string };
  cores: number;
}

function timeRecalls(
  service: RecallService,
  queries: RecallCorpus['queries'],
  warmup: RecallCorpus['queries'],
) {
  return timed(
    queries,
    async (query) => {
      const answer = await service.recall({
        tenantId: TENANT,
        projectId: PROJECT,
        query: query.text,
        k: 10,
        tier: 'memories',
      });
      return answer.results.map((hit) => hit.id);
    },
    warmup,
  );
}

const SCOPE = { tenantId: TENANT, projectId: PROJECT };

async function knnTop(store: SqliteRetrievalStore, query: Float32Array): Promise<string[]> {
  const found = await store.candidates('memories', {
    text: '',
    vector: { model: MODEL, dimension: DIMS, vector: Array.from(query) },
    scope: SCOPE,
    filter: [],
    size: 10,
  });
  return (found.knn ?? []).map((hit) => hit.id);
}

/** BM25 candidates alone, as many as RecallService asks for at k = 10 (candidatesPerList). */
async function bm25Top(store: SqliteRetrievalStore, text: string): Promise<number> {
  const found = await store.candidates('memories', {
    text,
    vector: null,
    scope: SCOPE,
    filter: [],
    size: 30,
  });
  return found.bm25.length;
}

/** Mean share of `truth[i]` found in `got[i]`. */
function overlap(got: string[][], truth: string[][]): number {
  let found = 0;
  let total = 0;
  truth.forEach((ids, i) => {
    const mine = new Set(got[i]);
    found += ids.filter((id) => mine.has(id)).length;
    total += ids.length;
  });
  return total === 0 ? 1 : Number((found / total).toFixed(3));
}

function writeCorpus(store: SqliteRetrievalStore, corpus: RecallCorpus): number {
  const started = performance.now();
  for (let i = 0; i < corpus.memories.length; i += 1_000) {
    const operations: RetrievalStoreOperation[] = corpus.memories
      .slice(i, i + 1_000)
      .map(({ memory, vector }) => {
        const { id, body } = memoryDocument(memory);
        const document = withEmbedding(body, {
          model: MODEL,
          dimension: DIMS,
          vector: Array.from(vector),
        });
        return { action: 'index', index: 'memories', id, document };
      });
    store.write(operations);
  }
  return (performance.now() - started) / 1000;
}

async function benchSize(size: number, queries: number): Promise<RecallSizeBench> {
  const corpus = syntheticRecallCorpus(size, queries + WARMUP_QUERIES);
  const measured = corpus.queries.slice(0, queries);
  const warmup = corpus.queries.slice(queries);
  const dir = mkdtempSync(join(tmpdir(), 'engram-bench-recall-'));
  const open = (exact: boolean) =>
    SqliteRetrievalStore.open({
      dataDir: dir,
      ...(exact && { vectorIndex: { annMinVectors: Number.POSITIVE_INFINITY } }),
    });
  const annStore = open(false);
  // Opened once the ANN recalls are measured: a serving process holds one store, not three.
  let exactStore: SqliteRetrievalStore | undefined;
  let ftsStore: SqliteRetrievalStore | undefined;
  try {
    const writeSeconds = writeCorpus(annStore, corpus);
    // The store has them now. Kept alive, 100k Memory objects and vectors in the JS heap would
    // make every collection during the measurement longer than a serving process ever sees.
    corpus.memories.length = 0;
    let started = performance.now();
    await knnTop(annStore, corpus.queries[0].vector);
    const indexBuildSeconds = (performance.now() - started) / 1000;
    const [graph] = annStore.describeVectors();
    annStore.close();
    const reopened = open(false);
    started = performance.now();
    await knnTop(reopened, corpus.queries[0].vector);
    const indexReopenMs = performance.now() - started;
    started = performance.now();
    reopened.warmLexical('memories');
    const lexicalBuildSeconds = (performance.now() - started) / 1000;

    const embedder = lookupEmbedder(corpus.queries);
    const ann = await timeRecalls(new RecallService(reopened, embedder), measured, warmup);
    const exactOnly = (exactStore = open(true));
    exactOnly.warmLexical('memories');
    const ftsOnly = (ftsStore = SqliteRetrievalStore.open({
      dataDir: dir,
      lexicalIndex: { build: 'never' },
    }));
    const exact = await timeRecalls(new RecallService(exactOnly, embedder), measured, warmup);
    const knn = (store: SqliteRetrievalStore) =>
      timed(measured, (query) => knnTop(store, query.vector), warmup);
    const knnAnn = await knn(reopened);
    const knnExact = await knn(exactOnly);
    const bm25 = await timed(measured, (query) => bm25Top(reopened, query.text), warmup);
    const bm25Fts = await timed(measured, (query) => bm25Top(ftsOnly, query.text), warmup);
    const rssMb = Math.round(process.memoryUsage().rss / 2 ** 20);
    reopened.close();
    return {
      memories: size,
      writeSeconds: Number(writeSeconds.toFixed(1)),
      indexBuildSeconds: Number(indexBuildSeconds.toFixed(1)),
      indexFileMb: Number(((graph?.fileBytes ?? 0) / 2 ** 20).toFixed(1)),
      indexReopenMs: Number(indexReopenMs.toFixed(1)),
      lexicalBuildSeconds: Number(lexicalBuildSeconds.toFixed(1)),
      ann: ann.latency,
      exact: exact.latency,
      knnAnn: knnAnn.latency,
      knnExact: knnExact.latency,
      bm25: bm25.latency,
      bm25Fts: bm25Fts.latency,
      knnRecallAt10: overlap(knnAnn.results, knnExact.results),
      resultOverlapAt10: overlap(ann.results, exact.results),
      rssMb,
    };
  } finally {
    ftsStore?.close();
    exactStore?.close();
    annStore.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The real model's per-query embedding time, or why it could not be measured. */
async function measureQueryEmbedding(
  queries: RecallCorpus['queries'],
): Promise<RecallBench['queryEmbedding']> {
  let embedder: Embedder;
  try {
    embedder = await createEmbedder();
  } catch (error) {
    return { unavailable: errorMessage(error) };
  }
  const times: number[] = [];
  for (const query of queries.slice(0, 100)) {
    const started = performance.now();
    await embedder.embed([query.text]);
    times.push(performance.now() - started);
  }
  await (embedder as { dispose?: () => Promise<void> }).dispose?.();
  return { model: embedder.id, p50: percentile(times, 50), p99: percentile(times, 99) };
}

/** `engram bench recall --embedded`. */
export async function benchRecall(options: {
  sizes: number[];
  queries: number;
}): Promise<RecallBench> {
  const sizes: RecallSizeBench[] = [];
  for (const size of options.sizes) sizes.push(await benchSize(size, options.queries));
  return {
    benchmark: 'recall',
    mode: 'embedded',
    queries: options.queries,
    corpus: CORPUS_DESCRIPTION,
    sizes,
    queryEmbedding: await measureQueryEmbedding(syntheticRecallCorpus(0, 100).queries),
    cores: cpus().length,
  };
}

const figures = (l: Latency) =>
  `p50 ${l.p50} / p95 ${l.p95} / p99 ${l.p99} ms (CPU p50 ${l.cpuP50} / p99 ${l.cpuP99})`;

export function formatRecallBench(result: RecallBench): string {
  const lines = result.sizes.map(
    (s) =>
      `recall (embedded) at ${s.memories.toLocaleString('en')} memories: ` +
      `recall with ANN ${figures(s.ann)}, with the exact scan ${figures(s.exact)}; ` +
      `kNN alone ANN ${figures(s.knnAnn)}, exact ${figures(s.knnExact)}; ` +
      `BM25 alone ${figures(s.bm25)}, on FTS5 only ${figures(s.bm25Fts)}; ` +
      `kNN recall@10 ${s.knnRecallAt10}, top-10 overlap ${s.resultOverlapAt10}; ` +
      `index build ${s.indexBuildSeconds} s, file ${s.indexFileMb} MB, reopen ${s.indexReopenMs} ms; ` +
      `BM25 postings build ${s.lexicalBuildSeconds} s; ` +
      `writes ${s.writeSeconds} s; RSS ${s.rssMb} MB`,
  );
  const embedding = result.queryEmbedding;
  lines.push(
    'unavailable' in embedding
      ? `query embedding not measured: ${embedding.unavailable}`
      : `query embedding (${embedding.model}): p50 ${embedding.p50} / p99 ${embedding.p99} ms per query, ` +
          `not included above (the bench embeds with the synthetic vectors)`,
  );
  lines.push(
    `${result.queries} queries per size after ${WARMUP_QUERIES} warm-up, ${result.corpus}, ${result.cores} cores; ` +
      'target p99 ≤ 10 ms at 100,000',
  );
  return lines.join('\n');
}
