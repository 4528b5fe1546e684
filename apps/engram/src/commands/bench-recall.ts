import { createEmbedder, percentile as nearestRank, type Embedder } from '@engram/ai';
import type { Memory, MemoryType } from '@engram/contracts';
import { errorMessage, NO_MEMORY_DETAILS } from '@engram/core';
import { SqliteRetrievalStore, type RetrievalStoreOperation } from '@engram/embedded';
import { memoryDocument, withEmbedding } from '@engram/elasticsearch';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { RecallService } from '../../../retrieval/src/recall.service';
import { random } from './bench-observe';

// `engram bench recall --embedded`: RecallService (the real ranking path) on the SQLite store at
// several corpus sizes, with kNN on the ANN graph and, as the reference, on the exact scan.
//
// The corpus is synthetic: memories written from a vocabulary of modules and concerns, and
// vectors drawn around one centre per (module, concern) — themselves around one centre per
// module — so that neighbours are clustered like sentence embeddings (unrelated pairs ≈ 0,
// same concern ≈ 0.5), not uniform noise on which every index looks perfect. Embedding 100k
// texts with the real model would take minutes on this machine; the real model's query
// embedding time is measured on its own and reported beside the search figures.

const DIMS = 384;
const MODEL = 'bench-synthetic-clustered@384';
const TENANT = 'bench';
const PROJECT = 'bench/repo';

const MODULES = [
  'auth token refresh',
  'billing invoices',
  'search indexer',
  'kafka consumer',
  'session segmenter',
  'payment webhooks',
  'user profile cache',
  'graphql gateway',
  'email notifications',
  'feature flags',
  'rate limiter',
  'file uploads',
  'audit log',
  'report exports',
  'onboarding wizard',
  'websocket presence',
  'sqlite migrations',
  'docker build',
  'ci pipeline',
  'i18n catalogue',
  'oauth callback',
  'pdf renderer',
  'image thumbnails',
  'cron scheduler',
  'elasticsearch mapping',
  'redis locks',
  'csv importer',
  'admin dashboard',
  'mobile push',
  'tenant isolation',
  'api pagination',
  'retry backoff',
  'schema registry',
  'neo4j graph writer',
  'embedding model',
  'hook spool',
  'pricing table',
  'dark mode theme',
  'access control',
  'backup restore',
] as const;

const CONCERNS = [
  ['fails after a restart', 'clear the stale lock file before start'],
  ['times out under load', 'raise the pool size and add a deadline'],
  ['returns duplicates', 'deduplicate by the deterministic id'],
  ['leaks memory', 'close the cursor in a finally block'],
  ['breaks on unicode input', 'normalise to NFC before comparing'],
  ['is flaky in CI', 'fake the clock instead of sleeping'],
  ['loses the last batch', 'flush before committing the offset'],
  ['ignores the tenant', 'always filter on tenantId and projectId'],
  ['needs the feature flag', 'read the flag once per request'],
  ['is slow on large inputs', 'stream instead of buffering everything'],
  ['logs secrets', 'redact tokens before logging'],
  ['races with logout', 'serialise refresh and logout on one mutex'],
  ['breaks after the upgrade', 'pin the client to the server major version'],
  ['drops events on rebalance', 'commit only after the handler returned'],
  ['has wrong time zones', 'store epoch millis and format at the edge'],
  ['retries forever', 'classify the error before retrying'],
  ['is not idempotent', 'upsert by explicit id'],
  ['misses the cache', 'key the cache by the normalised query'],
  ['fails the contract test', 'update the schema and the fixture together'],
  ['blocks the event loop', 'move the work to a worker thread'],
  ['sorts unstably', 'break ties by id'],
  ['exceeds the payload limit', 'split into bounded batches'],
  ['needs a migration', 'add the column with a default first'],
  ['crashes on empty input', 'return early on an empty list'],
  ['uses the wrong config', 'validate the config at start-up'],
] as const;

const TYPES: MemoryType[] = ['gotcha', 'decision', 'pattern', 'error_pattern', 'module_insight'];

function gaussian(next: () => number): number {
  const u = 1 - next();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * next());
}

/** `base` plus isotropic noise of the given norm, unit length. */
function around(next: () => number, base: Float32Array, noise: number): Float32Array {
  const v = new Float32Array(DIMS);
  let sum = 0;
  for (let i = 0; i < DIMS; i += 1) {
    v[i] = base[i] + (noise * gaussian(next)) / Math.sqrt(DIMS);
    sum += v[i] * v[i];
  }
  const length = Math.sqrt(sum);
  for (let i = 0; i < DIMS; i += 1) v[i] /= length;
  return v;
}

/** One centre per module, one per (module, concern) around it. */
function centres(next: () => number): Float32Array[][] {
  const zero = new Float32Array(DIMS);
  return MODULES.map(() => {
    const module = around(next, zero, 1);
    return CONCERNS.map(() => around(next, module, 1));
  });
}

export interface RecallCorpus {
  memories: { memory: Memory; vector: Float32Array }[];
  queries: { text: string; vector: Float32Array }[];
}

/** `size` memories and `queries` questions about them, each with its clustered vector. */
export function syntheticRecallCorpus(size: number, queries: number): RecallCorpus {
  const next = random(7);
  const centre = centres(next);
  const start = Date.UTC(2026, 9, 1);
  const memories = Array.from({ length: size }, (_, i) => {
    const m = Math.floor(next() * MODULES.length);
    const c = Math.floor(next() * CONCERNS.length);
    const [problem, fix] = CONCERNS[c];
    const file = `src/${MODULES[m].split(' ')[0]}/${MODULES[m].split(' ').at(-1)}-${i % 7}.ts`;
    const memory: Memory = {
      eventId: `bench-event-${i}`,
      tenantId: TENANT,
      projectId: PROJECT,
      sessionId: `bench-session-${i % 997}`,
      agentId: 'engram-distiller',
      userId: null,
      timestamp: start + i * 60_000,
      schemaVersion: 1,
      memoryType: TYPES[i % TYPES.length],
      content: `the ${MODULES[m]} ${problem} (${file}): ${fix}`,
      confidence: 0.5 + next() * 0.5,
      tags: [MODULES[m].split(' ')[0]],
      relatedFiles: [file],
      relatedModules: [MODULES[m].split(' ')[0]],
      createdAt: start + i * 60_000,
      lastAccessedAt: start + i * 60_000,
      accessCount: Math.floor(next() * 5),
      workUnitRef: null,
      scope: 'module',
      source: 'distilled',
      episodeId: null,
      commitSha: null,
      provenanceSessionIds: [],
      sourceEventIds: [],
      targetNodeId: null,
      relations: [],
      decayHalfLifeDays: null,
      needsReview: false,
      userVerified: false,
      citationText: null,
      staleAt: null,
      embedding: null,
      embeddingModel: null,
      ...NO_MEMORY_DETAILS,
      memoryId: `bench-memory-${i}`,
    };
    return { memory, vector: around(next, centre[m][c], 0.9) };
  });
  const questions = Array.from({ length: queries }, () => {
    const m = Math.floor(next() * MODULES.length);
    const c = Math.floor(next() * CONCERNS.length);
    return {
      text: `why does the ${MODULES[m]} ${CONCERNS[c][0]}?`,
      vector: around(next, centre[m][c], 1.1),
    };
  });
  return { memories, queries: questions };
}

/** The queries' vectors as an embedder: RecallService embeds through it, like the real model. */
function lookupEmbedder(queries: RecallCorpus['queries']): Embedder {
  const byText = new Map(queries.map((q) => [q.text, q.vector]));
  return {
    id: MODEL,
    dims: DIMS,
    embed: (texts) =>
      Promise.resolve(
        texts.map((text) => {
          const vector = byText.get(text);
          if (!vector) throw new Error(`bench: no vector for "${text}"`);
          return vector;
        }),
      ),
  };
}

/** The p-th percentile (nearest rank), in ms with two decimals. */
function percentile(values: readonly number[], p: number): number {
  return Number(nearestRank(values, p / 100).toFixed(2));
}

/** Milliseconds: wall clock, and the process's CPU time (what an idle machine would see). */
interface Latency {
  p50: number;
  p95: number;
  p99: number;
  cpuP50: number;
  cpuP99: number;
}

function latencyOf(wall: number[], cpu: number[]): Latency {
  return {
    p50: percentile(wall, 50),
    p95: percentile(wall, 95),
    p99: percentile(wall, 99),
    cpuP50: percentile(cpu, 50),
    cpuP99: percentile(cpu, 99),
  };
}

/** Runs `work` once per item, timing each call in wall-clock and CPU milliseconds. */
async function timed<T, R>(items: readonly T[], work: (item: T) => Promise<R>) {
  const wall: number[] = [];
  const cpu: number[] = [];
  const results: R[] = [];
  for (const item of items) {
    const started = performance.now();
    const cpuStarted = process.cpuUsage();
    results.push(await work(item));
    const used = process.cpuUsage(cpuStarted);
    cpu.push((used.user + used.system) / 1000);
    wall.push(performance.now() - started);
  }
  return { latency: latencyOf(wall, cpu), results };
}

export interface RecallSizeBench {
  memories: number;
  writeSeconds: number;
  /** First query of the ANN store: the graph built from SQLite and written to its file. */
  indexBuildSeconds: number;
  indexFileMb: number;
  /** `engram recall`'s path after a restart: the graph file memory-mapped, first query. */
  indexReopenMs: number;
  /** A whole recall (RecallService: BM25 + kNN candidates, fusion, ranking), ANN kNN. */
  ann: Latency;
  /** The same recalls with kNN on the exact scan (the store before the ANN graph). */
  exact: Latency;
  /** The store's candidate searches alone: kNN only (ANN and exact), BM25 only. */
  knnAnn: Latency;
  knnExact: Latency;
  bm25: Latency;
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

function timeRecalls(service: RecallService, queries: RecallCorpus['queries']) {
  return timed(queries, async (query) => {
    const answer = await service.recall({
      tenantId: TENANT,
      projectId: PROJECT,
      query: query.text,
      k: 10,
      tier: 'memories',
    });
    return answer.results.map((hit) => hit.id);
  });
}

const SCOPE_FILTER = [{ term: { tenantId: TENANT } }, { term: { projectId: PROJECT } }];

async function knnTop(store: SqliteRetrievalStore, query: Float32Array): Promise<string[]> {
  const found = await store.candidates('memories', {
    text: '',
    vector: { model: MODEL, dimension: DIMS, vector: Array.from(query) },
    filter: SCOPE_FILTER,
    size: 10,
  });
  return (found.knn ?? []).map((hit) => hit.id);
}

/** BM25 candidates alone, as many as RecallService asks for at k = 10 (candidatesPerList). */
async function bm25Top(store: SqliteRetrievalStore, text: string): Promise<number> {
  const found = await store.candidates('memories', {
    text,
    vector: null,
    filter: SCOPE_FILTER,
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
  const corpus = syntheticRecallCorpus(size, queries);
  const dir = mkdtempSync(join(tmpdir(), 'engram-bench-recall-'));
  const open = (exact: boolean) =>
    SqliteRetrievalStore.open({
      dataDir: dir,
      ...(exact && { vectorIndex: { annMinVectors: Number.POSITIVE_INFINITY } }),
    });
  const annStore = open(false);
  const exactStore = open(true);
  try {
    const writeSeconds = writeCorpus(annStore, corpus);
    let started = performance.now();
    await knnTop(annStore, corpus.queries[0].vector);
    const indexBuildSeconds = (performance.now() - started) / 1000;
    const [graph] = annStore.describeVectors();
    annStore.close();
    const reopened = open(false);
    started = performance.now();
    await knnTop(reopened, corpus.queries[0].vector);
    const indexReopenMs = performance.now() - started;

    const embedder = lookupEmbedder(corpus.queries);
    const ann = await timeRecalls(new RecallService(reopened, embedder), corpus.queries);
    const exact = await timeRecalls(new RecallService(exactStore, embedder), corpus.queries);
    const knnAnn = await timed(corpus.queries, (query) => knnTop(reopened, query.vector));
    const knnExact = await timed(corpus.queries, (query) => knnTop(exactStore, query.vector));
    const bm25 = await timed(corpus.queries, (query) => bm25Top(reopened, query.text));
    const rssMb = Math.round(process.memoryUsage().rss / 2 ** 20);
    reopened.close();
    return {
      memories: size,
      writeSeconds: Number(writeSeconds.toFixed(1)),
      indexBuildSeconds: Number(indexBuildSeconds.toFixed(1)),
      indexFileMb: Number(((graph?.fileBytes ?? 0) / 2 ** 20).toFixed(1)),
      indexReopenMs: Number(indexReopenMs.toFixed(1)),
      ann: ann.latency,
      exact: exact.latency,
      knnAnn: knnAnn.latency,
      knnExact: knnExact.latency,
      bm25: bm25.latency,
      knnRecallAt10: overlap(knnAnn.results, knnExact.results),
      resultOverlapAt10: overlap(ann.results, exact.results),
      rssMb,
    };
  } finally {
    exactStore.close();
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
    corpus: `synthetic: ${MODULES.length}×${CONCERNS.length} clustered topics, ${DIMS}-d vectors`,
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
      `kNN alone ANN ${figures(s.knnAnn)}, exact ${figures(s.knnExact)}; BM25 alone ${figures(s.bm25)}; ` +
      `kNN recall@10 ${s.knnRecallAt10}, top-10 overlap ${s.resultOverlapAt10}; ` +
      `index build ${s.indexBuildSeconds} s, file ${s.indexFileMb} MB, reopen ${s.indexReopenMs} ms; ` +
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
    `${result.queries} queries per size, ${result.corpus}, ${result.cores} cores; target p99 ≤ 10 ms at 100,000`,
  );
  return lines.join('\n');
}
