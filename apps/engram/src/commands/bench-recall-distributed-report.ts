// What `engram bench recall --distributed` reports: the figures, and their text.

/** Recall targets of issue #5, at 100k memories. */
export const DISTRIBUTED_RECALL_TARGETS = { p50Ms: 15, p99Ms: 50, atMemories: 100_000 } as const;

export interface WallLatency {
  p50: number;
  p95: number;
  p99: number;
}

export interface DistributedRecallRun {
  /** Calls in flight at once (1: one after the other). */
  inFlight: number;
  queries: number;
  /** Client-side wall time of each gRPC call, ms. */
  latency: WallLatency;
  /** The server's first recalls (part of the warm-up, not of `latency`), ms. */
  coldStart: { queries: number; p50: number; max: number };
  /** The warm-up before `latency`: its recalls and their p50 per window of `window`, in order. */
  warmup: { queries: number; window: number; p50s: number[] };
  /** How long the Elasticsearch node had been running when the measured recalls began. */
  elasticsearchUptimeMinutes: number;
  /** Recalls per second over the run. */
  throughput: number;
  /**
   * RecallTimings on the server, ms: p50 / p99 of each part; and `took` summed over a recall's
   * `_msearch` requests, the time Elasticsearch itself reports (BM25's runs during `embed`, kNN's
   * during `search`).
   */
  server: Record<
    'embed' | 'search' | 'rank' | 'total' | 'elasticsearchTook',
    { p50: number; p99: number }
  >;
  /**
   * Shares of the summed client latency: query embedding, waiting for the candidate searches once
   * the query is embedded, fusion and ranking, the rest of the server's work, and gRPC (client,
   * transport, Nest) — these five add up to 1 — and, within `embed` + `search`, what
   * Elasticsearch reports as `took`.
   */
  shares: Record<
    'embed' | 'search' | 'rank' | 'otherServer' | 'grpc' | 'elasticsearchTook',
    number
  >;
  /** Queries the server's query cache answered (repeated texts) without the model. */
  queryCacheHits: number;
  /** Answers without a single result (0 on this corpus). */
  emptyAnswers: number;
}

export interface DistributedRecallSizeBench {
  memories: number;
  index: string;
  indexing: {
    /** Bulk writes alone, and the refresh after them. */
    bulkSeconds: number;
    refreshSeconds: number;
    /** Memories per second, bulk writes and refresh together. */
    docsPerSecond: number;
    bulkRequests: number;
    /** Waiting for Elasticsearch's background merges to finish before measuring. */
    mergeWaitSeconds: number;
    /** Segments once the background merges were done, before the idle merge. */
    segmentsAsLoaded: number;
    /** The retrieval indexer's merge of a quiet index to one segment (0: not needed). */
    idleMergeSeconds: number;
    /** Segments when the queries ran. */
    segments: number;
    storeMb: number;
  };
  sequential: DistributedRecallRun;
  concurrent: DistributedRecallRun;
}

export interface DistributedRecallBench {
  benchmark: 'recall';
  mode: 'distributed';
  elasticsearchUrl: string;
  queries: number;
  corpus: string;
  sizes: DistributedRecallSizeBench[];
  /** The model each query went through on the server, or why none did. */
  queryEmbedding: { model: string } | { unavailable: string };
  targets: typeof DISTRIBUTED_RECALL_TARGETS;
  cores: number;
}

const percent = (share: number) => `${(share * 100).toFixed(1)}%`;

function formatRun(run: DistributedRecallRun): string {
  const { latency, shares, server } = run;
  return (
    `${run.inFlight} in flight: p50 ${latency.p50} / p95 ${latency.p95} / p99 ${latency.p99} ms, ` +
    `${run.throughput} recalls/s; time in query embedding ${percent(shares.embed)} ` +
    `(p50 ${server.embed.p50} ms; BM25 searched meanwhile), Elasticsearch after it ${percent(shares.search)} ` +
    `(p50 ${server.search.p50} ms; its own took ${percent(shares.elasticsearchTook)}, p50 ${server.elasticsearchTook.p50} ms ` +
    `per _msearch, two a recall), fusion/ranking ${percent(shares.rank)} (p50 ${server.rank.p50} ms), ` +
    `other server ${percent(shares.otherServer)}, gRPC ${percent(shares.grpc)}; ${run.queryCacheHits} query-cache hits, ` +
    `${run.emptyAnswers} empty answers; cold start (first ${run.coldStart.queries} recalls of the server): ` +
    `p50 ${run.coldStart.p50} / max ${run.coldStart.max} ms; warm-up (${run.warmup.queries.toLocaleString('en')} recalls) ` +
    `p50 per ${run.warmup.window}: ${run.warmup.p50s.join(', ')} ms; Elasticsearch up ${run.elasticsearchUptimeMinutes} min`
  );
}

export function formatDistributedRecallBench(result: DistributedRecallBench): string {
  const { targets } = result;
  const lines = result.sizes.flatMap((s) => {
    const verdict =
      s.memories >= targets.atMemories
        ? ` — target p50 ≤ ${targets.p50Ms} ms: ${s.sequential.latency.p50 <= targets.p50Ms ? 'met' : 'missed'}, ` +
          `p99 ≤ ${targets.p99Ms} ms: ${s.sequential.latency.p99 <= targets.p99Ms ? 'met' : 'missed'}`
        : '';
    return [
      `recall (distributed, gRPC + Elasticsearch) at ${s.memories.toLocaleString('en')} memories${verdict}`,
      `  indexing: ${s.indexing.docsPerSecond.toLocaleString('en')} memories/s (bulk ${s.indexing.bulkSeconds} s in ` +
        `${s.indexing.bulkRequests} requests, refresh ${s.indexing.refreshSeconds} s; then ${s.indexing.mergeWaitSeconds} s of merges; ` +
        `${s.indexing.segmentsAsLoaded} segments, merged to ${s.indexing.segments} in ${s.indexing.idleMergeSeconds} s ` +
        `as the indexer does once idle; ${s.indexing.storeMb} MB)`,
      `  ${formatRun(s.sequential)}`,
      `  ${formatRun(s.concurrent)}`,
    ];
  });
  const embedding = result.queryEmbedding;
  lines.push(
    'unavailable' in embedding
      ? `queries NOT embedded by a real model (${embedding.unavailable}): the embedding share is ~0; run npm run models:setup`
      : `each query embedded by ${embedding.model} on the server (its vector replaced by the corpus's synthetic one)`,
  );
  lines.push(
    `${result.queries} queries per run after the warm-up (all distinct texts), ${result.corpus}, ${result.cores} cores, ` +
      `client, server and Elasticsearch on this machine; targets p50 ≤ ${targets.p50Ms} ms, p99 ≤ ${targets.p99Ms} ms ` +
      `at ${targets.atMemories.toLocaleString('en')} memories`,
  );
  return lines.join('\n');
}
