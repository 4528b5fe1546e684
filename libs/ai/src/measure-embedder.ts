import { cosine } from '@engram/core';
import type { Embedder } from './embedder';

/** Short prompts of the kind Engram embeds: one batch of 32. */
export const BENCH_SENTENCES: readonly string[] = [
  'fix the auth bug',
  'why does the build fail on CI',
  'add a retry to the kafka consumer',
  'rename the user service to account service',
  'the test suite is flaky on node 20',
  'write a migration for the orders table',
  'bump typescript to 5.9 and fix the errors',
  'the segmenter loses state after a rebalance',
  'explain how the retry policy works',
  'refactor the elasticsearch adapter',
  'add an index on created_at',
  'why is memory usage growing in the worker',
  'set up eslint with typed rules',
  'neo4j does not start from the compose file',
  'cache the schema registry lookups',
  'profile the hot path in the tokenizer',
  'make the cli print json',
  'document the config variables',
  'the grpc server returns unavailable',
  'split the monolith into two services',
  'add pagination to the search endpoint',
  'fix the off by one in the batch loop',
  'upgrade nestjs to version 11',
  'the api returns 500 on empty input',
  'write unit tests for the parser',
  'improve the error message for missing files',
  'reduce the bundle size of the web app',
  'check the p99 latency of retrieval',
  'add a health check endpoint',
  'sort the search results by score',
  'handle unicode in file names',
  'debug the login failure',
];

/** The design's sanity pair: the first text is near the second and far from the third. */
export const SANITY_TEXTS = [
  'fix the auth bug',
  'debug the login failure',
  "what's the weather in New York",
] as const;

export interface EmbedderMeasurement {
  id: string;
  dims: number;
  /** Throughput on BENCH_SENTENCES embedded as one call, over several rounds. */
  sentencesPerSecond: number;
  /** Latency of embedding one sentence per call. */
  singleLatencyMs: { p50: number; p95: number };
  /** cos(auth bug, login failure) and cos(auth bug, New York weather). */
  sanity: { related: number; unrelated: number };
}

export interface MeasureOptions {
  /** Timed rounds of the 32-sentence batch (default 5), after one untimed warm-up. */
  rounds?: number;
  now?: () => number;
}

/** Numbers for `engram bench`: speed on short developer prompts, and the sanity pair. */
export async function measureEmbedder(
  embedder: Embedder,
  { rounds = 5, now = () => performance.now() }: MeasureOptions = {},
): Promise<EmbedderMeasurement> {
  await embedder.embed(BENCH_SENTENCES); // warm-up: first runs allocate and plan
  return {
    id: embedder.id,
    dims: embedder.dims,
    sentencesPerSecond: await throughput(embedder, rounds, now),
    singleLatencyMs: await singleLatency(embedder, now),
    sanity: await sanityPair(embedder),
  };
}

async function throughput(embedder: Embedder, rounds: number, now: () => number): Promise<number> {
  const start = now();
  for (let round = 0; round < rounds; round += 1) await embedder.embed(BENCH_SENTENCES);
  const seconds = (now() - start) / 1000;
  return (rounds * BENCH_SENTENCES.length) / seconds;
}

async function singleLatency(
  embedder: Embedder,
  now: () => number,
): Promise<{ p50: number; p95: number }> {
  const latencies: number[] = [];
  for (const sentence of BENCH_SENTENCES) {
    const start = now();
    await embedder.embed([sentence]);
    latencies.push(now() - start);
  }
  return { p50: percentile(latencies, 0.5), p95: percentile(latencies, 0.95) };
}

export async function sanityPair(
  embedder: Embedder,
): Promise<{ related: number; unrelated: number }> {
  const [anchor, related, unrelated] = await embedder.embed(SANITY_TEXTS);
  return { related: cosine(anchor, related), unrelated: cosine(anchor, unrelated) };
}

/** Nearest-rank percentile of a non-empty sample. */
export function percentile(values: readonly number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(fraction * sorted.length)));
  return sorted[rank - 1];
}
