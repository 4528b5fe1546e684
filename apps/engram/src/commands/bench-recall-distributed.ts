import { chunk, createEmbedder, type Embedder } from '@engram/ai';
import type { Client } from '@elastic/elasticsearch';
import { DEFAULT_RANKING_CONFIG, errorMessage } from '@engram/core';
import {
  createElasticsearchClient,
  ensureRetrievalIndices,
  retrievalIndexNames,
} from '@engram/elasticsearch';
import { cpus } from 'node:os';
import {
  openElasticsearchRecall,
  recallGrpcClient,
  startRecallServer,
  type RecallTimings,
} from '@engram/app-retrieval';
import {
  CORPUS_DESCRIPTION,
  DIMS,
  DISTINCT_QUESTIONS,
  lookupEmbedder,
  MODEL,
  syntheticRecallCorpus,
  warmupQueries,
  type RecallCorpus,
} from './bench-recall-corpus';
import {
  DISTRIBUTED_RECALL_TARGETS,
  type DistributedRecallBench,
  type DistributedRecallRun,
  type DistributedRecallSizeBench,
} from './bench-recall-distributed-report';
import { deleteBenchIndices, indexCorpus, nodeUptimeMinutes } from './bench-recall-elasticsearch';
import { freeLoopbackPort, grpcRecall, ready, type RecallGrpcClient } from './bench-recall-grpc';
import { percentile } from './bench-recall-latency';

// ---- `engram bench recall --distributed` ------------------------------------------------------
//
// The same synthetic corpus, bulk-written into fresh Elasticsearch indices (a unique prefix per
// run and size, deleted at the end, also on failure), then Recall over real gRPC: a @grpc/grpc-js
// client against the real recall server (startRecallServer) on a free loopback port, in this
// process. Each query is embedded by the real MiniLM model when it is installed — its vector is
// thrown away and the query's synthetic vector used instead, so that kNN compares vectors of one
// space — so the query-embedding share is the real model's. The server's RecallTimings give the
// shares of query embedding, Elasticsearch (the candidate searches: HTTP round trips and parsing
// included) and fusion/ranking; the rest is the gRPC round trip and the server's own work.

/**
 * Warm-up recalls before each measured distributed run (the default of `warmup`). A recall server
 * answers thousands of recalls a day; its steady state is what the targets are about. A fresh one
 * is slower for a long while — V8 optimising the recall path, Elasticsearch's JIT and filter
 * caches settling on the other core, the counter mirror loading. Measured on this 2-core machine,
 * p50 per 400 recalls of a fresh server: 18.1, 18.3, 17.0, 17.0, 14.6, 13.6, 12.6, 12.8, 12.8 ms,
 * level after about 2,000 (200 measured a server still warming); right after an Elasticsearch
 * restart, still falling after 4,800. That start is reported apart, not hidden: the first recalls
 * as `coldStart`, the warm-up's p50 per window as `warmup`, and how long Elasticsearch has run.
 */
export const DISTRIBUTED_WARMUP_QUERIES = 2_000;

/** Warm-up recalls per reported warm-up p50. */
const WARMUP_WINDOW = 500;

/** The first recalls of a fresh server, reported as its cold start. */
const COLD_START_QUERIES = 10;

export interface DistributedRecallOptions {
  elasticsearchUrl: string;
  sizes: number[];
  queries: number;
  /** Warm-up recalls before each measured run (default DISTRIBUTED_WARMUP_QUERIES). */
  warmup?: number;
  /** Calls in flight in the concurrent run (default 4). */
  inFlight?: number;
  /** Prefix of the bench's index names (default `bench-recall-<pid>-<time>`), then `-<size>.`. */
  indexPrefix?: string;
  /** The model that embeds each query; absent: createEmbedder(); null: none. */
  queryModel?: Embedder | null;
  /** Progress bars and phase lines on stderr (default true). */
  progress?: boolean;
  log?: (line: string) => void;
}

/** The queries' synthetic vectors, after the real model embedded the text (time spent, kept). */
function queryEmbedder(queries: RecallCorpus['queries'], model: Embedder | null) {
  const lookup = lookupEmbedder(queries);
  const counts = { texts: 0 };
  const embedder: Embedder = {
    id: MODEL,
    dims: DIMS,
    async embed(texts) {
      counts.texts += texts.length;
      if (model) await model.embed(texts);
      return lookup.embed(texts);
    },
  };
  return { embedder, counts };
}

/** `queries` over gRPC, `inFlight` at a time, against a fresh server (cold query cache). */
async function measureRun(
  options: DistributedRecallOptions & { indexPrefix: string },
  model: Embedder | null,
  queries: RecallCorpus['queries'],
  warmup: RecallCorpus['queries'],
  inFlight: number,
): Promise<DistributedRecallRun> {
  const { embedder, counts } = queryEmbedder([...queries, ...warmup], model);
  const url = `127.0.0.1:${await freeLoopbackPort()}`;
  // The server's own backend (its client and counter mirror), as `engram start --distributed`'s.
  const recallBackend = openElasticsearchRecall({
    elasticsearchUrl: options.elasticsearchUrl,
    indexPrefix: options.indexPrefix,
    warn: (message) => console.error(message),
  });
  const server = await startRecallServer({
    ranking: DEFAULT_RANKING_CONFIG,
    backend: recallBackend.backend,
    embedder,
    url,
    logger: false,
  }).catch(async (error: unknown) => {
    await recallBackend.close();
    throw error;
  });
  const timings: RecallTimings[] = [];
  const recall = server.service.recall.bind(server.service);
  server.service.recall = async (input) => {
    const answer = await recall(input);
    timings.push(answer.timings);
    return answer;
  };
  // What Elasticsearch itself reports spending (`took` of each _msearch): the rest of the search
  // share is the HTTP round trip and parsing the candidates' `_source` (vectors included).
  const took: number[] = [];
  recallBackend.client.diagnostic.on('response', (error, result) => {
    const body = result?.body as { took?: unknown } | undefined;
    if (!error && result?.meta.request.params.path.endsWith('/_msearch')) {
      if (typeof body?.took === 'number') took.push(body.took);
    }
  });
  const client = recallGrpcClient<RecallGrpcClient>(url);
  try {
    await ready(client);
    const warm: number[] = [];
    for (const query of warmup) {
      const started = performance.now();
      await grpcRecall(client, query.text);
      warm.push(performance.now() - started);
    }
    const cold = warm.slice(0, COLD_START_QUERIES);
    const elasticsearchUptimeMinutes = await nodeUptimeMinutes(recallBackend.client);
    timings.length = 0;
    took.length = 0;
    counts.texts = 0;
    const wall: number[] = [];
    let next = 0;
    let emptyAnswers = 0;
    const worker = async () => {
      while (next < queries.length) {
        const query = queries[next];
        next += 1;
        const started = performance.now();
        const reply = await grpcRecall(client, query.text);
        wall.push(performance.now() - started);
        if (reply.embedding_model !== MODEL) {
          throw new Error(`bench: the server embedded with ${reply.embedding_model}, not ${MODEL}`);
        }
        if (reply.results.length === 0) emptyAnswers += 1;
      }
    };
    const started = performance.now();
    await Promise.all(Array.from({ length: inFlight }, worker));
    const seconds = (performance.now() - started) / 1000;
    const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
    const part = (pick: (t: RecallTimings) => number) => timings.map(pick);
    const totalWall = sum(wall);
    const [embed, search, rank, total] = [
      sum(part((t) => t.embedMs)),
      sum(part((t) => t.searchMs)),
      sum(part((t) => t.rankMs)),
      sum(part((t) => t.totalMs)),
    ];
    const share = (value: number) => Number((value / totalWall).toFixed(3));
    const pcts = (values: number[]) => ({
      p50: percentile(values, 50),
      p99: percentile(values, 99),
    });
    return {
      inFlight,
      queries: queries.length,
      latency: { p50: percentile(wall, 50), p95: percentile(wall, 95), p99: percentile(wall, 99) },
      coldStart: { queries: cold.length, p50: percentile(cold, 50), max: percentile(cold, 100) },
      warmup: {
        queries: warm.length,
        window: WARMUP_WINDOW,
        p50s: chunk(warm, WARMUP_WINDOW).map((window) => percentile(window, 50)),
      },
      elasticsearchUptimeMinutes,
      throughput: Number((queries.length / seconds).toFixed(1)),
      server: {
        embed: pcts(part((t) => t.embedMs)),
        search: pcts(part((t) => t.searchMs)),
        rank: pcts(part((t) => t.rankMs)),
        total: pcts(part((t) => t.totalMs)),
        elasticsearchTook: pcts(took),
      },
      shares: {
        embed: share(embed),
        search: share(search),
        rank: share(rank),
        otherServer: share(total - embed - search - rank),
        grpc: share(totalWall - total),
        elasticsearchTook: share(sum(took)),
      },
      queryCacheHits: queries.length - counts.texts,
      emptyAnswers,
    };
  } finally {
    client.close();
    await server.stop();
    await recallBackend.close();
  }
}

async function benchDistributedSize(
  client: Client,
  options: DistributedRecallOptions & { indexPrefix: string },
  model: Embedder | null,
  size: number,
): Promise<DistributedRecallSizeBench> {
  const log = options.log ?? (() => undefined);
  const indexPrefix = `${options.indexPrefix}-${size}.`;
  const indices = retrievalIndexNames(indexPrefix);
  const sized = { ...options, indexPrefix };
  // Ctrl-C mid-run: the indices go too (a 100k index is a few hundred MB).
  const interrupted = () => {
    void deleteBenchIndices(client, indices).finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupted);
  try {
    await ensureRetrievalIndices(client, indices, { dims: DIMS });
    log(`indexing ${size.toLocaleString('en')} memories into ${indices.memories}…`);
    const warmupCount = options.warmup ?? DISTRIBUTED_WARMUP_QUERIES;
    const spare = Math.max(0, Math.min(warmupCount, DISTINCT_QUESTIONS - options.queries));
    const corpus = syntheticRecallCorpus(size, options.queries + spare, { distinctTexts: true });
    const indexing = await indexCorpus(
      client,
      indices.memories,
      corpus,
      options.progress !== false,
    );
    log(
      `indexed at ${indexing.docsPerSecond.toLocaleString('en')} memories/s ` +
        `(bulk ${indexing.bulkSeconds} s, refresh ${indexing.refreshSeconds} s); recalling over gRPC…`,
    );
    const queries = corpus.queries.slice(0, options.queries);
    const warmup = warmupQueries(corpus.queries.slice(options.queries), queries, warmupCount);
    corpus.memories.length = 0;
    const sequential = await measureRun(sized, model, queries, warmup, 1);
    const concurrent = await measureRun(sized, model, queries, warmup, options.inFlight ?? 4);
    return { memories: size, index: indices.memories, indexing, sequential, concurrent };
  } finally {
    process.removeListener('SIGINT', interrupted);
    await deleteBenchIndices(client, indices);
  }
}

/** `engram bench recall --distributed`. */
export async function benchRecallDistributed(
  options: DistributedRecallOptions,
): Promise<DistributedRecallBench> {
  const indexPrefix =
    options.indexPrefix ?? `bench-recall-${process.pid}-${Date.now().toString(36)}`;
  let model: Embedder | null = null;
  let queryEmbedding: DistributedRecallBench['queryEmbedding'];
  let ownModel = false;
  if (options.queryModel === undefined) {
    try {
      model = await createEmbedder();
      ownModel = true;
      queryEmbedding = { model: model.id };
    } catch (error) {
      queryEmbedding = { unavailable: errorMessage(error) };
    }
  } else {
    model = options.queryModel;
    queryEmbedding = model
      ? { model: model.id }
      : { unavailable: 'no model given: queries are not embedded' };
  }
  const client = createElasticsearchClient(options.elasticsearchUrl);
  try {
    const sizes: DistributedRecallSizeBench[] = [];
    for (const size of options.sizes) {
      sizes.push(await benchDistributedSize(client, { ...options, indexPrefix }, model, size));
    }
    return {
      benchmark: 'recall',
      mode: 'distributed',
      elasticsearchUrl: options.elasticsearchUrl,
      queries: options.queries,
      corpus: CORPUS_DESCRIPTION,
      sizes,
      queryEmbedding,
      targets: DISTRIBUTED_RECALL_TARGETS,
      cores: cpus().length,
    };
  } finally {
    await client.close();
    if (ownModel) await (model as { dispose?: () => Promise<void> } | null)?.dispose?.();
  }
}
