import { segmenterSettings, StreamSegmenter, type SegmenterPrompt } from '@engram/core';
import { loadConfig } from '@engram/config';
import type { Command } from 'commander';
import { benchDistill, formatDistillBench } from './bench-distill';
import { runFrictionBenchCommand } from './bench-friction';
import { benchHook, formatHookBench } from './bench-hook';
import { benchObserve, formatObserveBench } from './bench-observe';
import { benchRecall, formatRecallBench } from './bench-recall';
import { benchRecallDistributed, DISTRIBUTED_WARMUP_QUERIES } from './bench-recall-distributed';
import { formatDistributedRecallBench } from './bench-recall-distributed-report';
import { benchSegmentEndToEnd } from './bench-segment-e2e';
import { benchTruth, formatTruthBench } from './bench-truth';
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';

/** Tasks as developers phrase them: an intent, follow-ups sharing its words, terse replies. */
const TASKS = [
  [
    'fix the token refresh race in src/auth/refresh.ts when logout happens during refresh',
    'the refresh token race still happens when two tabs refresh at the same time',
    'yes',
    'add a regression test for the refresh token race with two concurrent refresh calls',
    'ok push',
  ],
  [
    'upgrade the elasticsearch client to 8.19 and regenerate the index templates',
    'the index templates for engram-memories need the dense_vector dims from config',
    'looks good',
    'regenerate the elasticsearch index templates again after the client upgrade',
  ],
  [
    'why does the kafka consumer stall after a rebalance in the segmenter service',
    '5,6',
    'make the consumer resolve offsets of control records after a rebalance',
    'the kafka consumer still stalls after the second rebalance, check the offsets again',
  ],
  [
    'profile the recall latency of the retrieval service under 50 concurrent queries',
    'the recall latency p99 is dominated by the knn search, try a smaller num_candidates',
    'do it',
  ],
];

/** The session's turn-th prompt: tasks in a session-specific order, each prompt of a task once. */
function taskPrompt(session: number, turn: number): string {
  let remaining = turn;
  for (let t = 0; ; t += 1) {
    const task = TASKS[(session + t) % TASKS.length];
    if (remaining < task.length) return task[remaining];
    remaining -= task.length;
  }
}

export function syntheticPrompts(count: number, sessions: number): SegmenterPrompt[] {
  const start = Date.UTC(2026, 10, 1);
  return Array.from({ length: count }, (_, i) => {
    const session = i % sessions;
    const turn = Math.floor(i / sessions);
    return {
      eventId: `bench-${i}`,
      tenantId: 'bench',
      projectId: `bench/repo-${session % 10}`,
      sessionId: `bench-session-${session}`,
      agentId: 'bench-agent',
      userId: null,
      timestamp: start + turn * 45_000 + session,
      promptId: turn + 1,
      source: 'user',
      channel: 'cli',
      channelKind: 'explicit',
      explicitThreadId: null,
      text: taskPrompt(session, turn),
      parentEpisodeId: null,
    };
  });
}

export interface SegmentCoreBench {
  benchmark: 'segment-core';
  mode: 'keyword';
  /** `synthetic` (one boundary per two prompts: a worst case) or the file measured. */
  dataset: string;
  prompts: number;
  sessions: number;
  seconds: number;
  promptsPerSecond: number;
  boundaries: number;
  openSessionsAtEnd: number;
  heapUsedMb: number;
  cores: number;
}

/**
 * A recorded or labelled prompt file (PromptSubmitted JSON lines, sessions in order) repeated
 * with fresh session ids until it holds `count` prompts: the core on a real boundary rate.
 */
export function datasetPrompts(file: string, count: number): SegmenterPrompt[] {
  const lines = readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '');
  const base = lines.map((line) => {
    const event = JSON.parse(line) as SegmenterPrompt & { timestamp: number | string };
    return { ...event, timestamp: new Date(event.timestamp).getTime() };
  });
  if (base.length === 0) throw new Error(`${file} holds no prompts`);
  return Array.from({ length: count }, (_, i) => {
    const prompt = base[i % base.length];
    const copy = Math.floor(i / base.length);
    return {
      ...prompt,
      eventId: `${prompt.eventId}#${copy}`,
      sessionId: `${prompt.sessionId}#${copy}`,
    };
  });
}

/** Prompts/s of the pure segmenter core on one core (keyword mode). */
export function benchSegmentCore(
  prompts = 200_000,
  sessions = 2_000,
  dataset?: string,
): SegmentCoreBench {
  const input = dataset ? datasetPrompts(dataset, prompts) : syntheticPrompts(prompts, sessions);
  const run = () => {
    const segmenter = new StreamSegmenter({ settings: segmenterSettings() });
    let boundaries = 0;
    const started = process.hrtime.bigint();
    for (const prompt of input) if (segmenter.push(prompt).decision.boundary) boundaries += 1;
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    return { seconds, boundaries, open: segmenter.openSessions };
  };
  // A warm-up pass, then the median of three measured passes (GC makes single passes noisy).
  run();
  const passes = [run(), run(), run()].sort((a, b) => a.seconds - b.seconds);
  const { seconds, boundaries, open } = passes[1];
  return {
    benchmark: 'segment-core',
    mode: 'keyword',
    dataset: dataset ?? 'synthetic',
    prompts,
    sessions: new Set(input.map((p) => p.sessionId)).size,
    seconds: Number(seconds.toFixed(3)),
    promptsPerSecond: Math.round(prompts / seconds),
    boundaries,
    openSessionsAtEnd: open,
    heapUsedMb: Math.round(process.memoryUsage().heapUsed / 2 ** 20),
    cores: cpus().length,
  };
}

async function runRecallBench(options: {
  distributed?: boolean;
  sizes?: number[];
  queries?: number;
  warmup?: number;
  json?: boolean;
}): Promise<void> {
  const sizes = options.sizes ?? [10_000, 100_000];
  // Distributed: enough recalls for a p99 that is not just the second-worst of 200.
  const queries = options.queries ?? (options.distributed ? 1_000 : 200);
  if (!sizes.every((n) => Number.isInteger(n) && n > 0) || !(queries > 0)) {
    console.error('engram bench recall: --sizes takes positive integers, --queries a positive one');
    process.exitCode = 2;
    return;
  }
  const { warmup } = options;
  if (warmup !== undefined && !(Number.isInteger(warmup) && warmup > 0)) {
    console.error('engram bench recall: --warmup takes a positive integer');
    process.exitCode = 2;
    return;
  }
  if (options.distributed) {
    const result = await benchRecallDistributed({
      elasticsearchUrl: loadConfig().elasticsearch.url,
      sizes,
      queries,
      warmup,
      log: (line) => console.error(line),
    });
    console.log(options.json ? JSON.stringify(result) : formatDistributedRecallBench(result));
    return;
  }
  const result = await benchRecall({ sizes, queries });
  console.log(options.json ? JSON.stringify(result) : formatRecallBench(result));
}

export function registerBenchCommand(program: Command): void {
  program
    .command('bench')
    .description('benchmarks; with --json the last line is one JSON object of the figures')
    .argument('<target>', 'segment | observe | distill | recall | truth | hook | friction')
    .option('--prompts <n>', 'prompts to segment (core) or publish (distributed)', (v) =>
      Number.parseInt(v, 10),
    )
    .option(
      '--distributed',
      'end to end through Kafka, the Schema Registry and the service (recall: gRPC on Elasticsearch)',
    )
    .option(
      '--dataset <file>',
      'core: PromptSubmitted JSON lines to repeat instead of the synthetic worst case',
    )
    .option(
      '--sessions <n>',
      'observe: synthetic sessions of 40 tool calls; distill: recorded sessions',
      (v) => Number.parseInt(v, 10),
    )
    .option('--batch <n>', 'observe: tool calls per observer transaction (graph batch)', (v) =>
      Number.parseInt(v, 10),
    )
    .option('--embedded', 'recall: on the SQLite store of embedded mode (the default)')
    .option('--sizes <list>', 'recall: corpus sizes, comma-separated (default 10000,100000)', (v) =>
      v.split(',').map((n) => Number.parseInt(n, 10)),
    )
    .option('--queries <n>', 'recall: queries per size (default 200; --distributed 1000)', (v) =>
      Number.parseInt(v, 10),
    )
    .option(
      '--warmup <n>',
      `recall --distributed: warm-up recalls before each measured run (default ${DISTRIBUTED_WARMUP_QUERIES})`,
      (v) => Number.parseInt(v, 10),
    )
    .option('--projects <n>', 'truth: generated projects (default 20)', (v) =>
      Number.parseInt(v, 10),
    )
    .option('--seed <n>', 'truth: seed of the generated projects (default 1)', (v) =>
      Number.parseInt(v, 10),
    )
    .option('--runs <n>', 'hook: hook processes per case (default 50)', (v) =>
      Number.parseInt(v, 10),
    )
    .option(
      '--developers <n>',
      'friction: developers of the generated organisation (default 50)',
      (v) => Number.parseInt(v, 10),
    )
    .option('--weeks <n>', 'friction: weeks of their sessions (default 4)', (v) =>
      Number.parseInt(v, 10),
    )
    .option('--events-per-session <n>', 'friction: events per session (default 500)', (v) =>
      Number.parseInt(v, 10),
    )
    .option('--measure <dir>', 'friction (internal): the measuring child on DIR')
    .option('--json', 'print the figures as one JSON line')
    .action(
      async (
        target: string,
        options: {
          prompts?: number;
          json?: boolean;
          distributed?: boolean;
          dataset?: string;
          sessions?: number;
          batch?: number;
          sizes?: number[];
          queries?: number;
          warmup?: number;
          projects?: number;
          seed?: number;
          developers?: number;
          weeks?: number;
          eventsPerSession?: number;
          measure?: string;
          runs?: number;
        },
      ) => {
        if (target === 'hook') {
          const result = await benchHook({
            runs: options.runs ?? 50,
            log: (line) => console.error(line),
          });
          console.log(options.json ? JSON.stringify(result) : formatHookBench(result));
          return;
        }
        if (target === 'friction') {
          await runFrictionBenchCommand(options);
          return;
        }
        if (target === 'truth') {
          const result = await benchTruth({
            projects: options.projects ?? 20,
            seed: options.seed ?? 1,
            log: (line) => console.error(line),
          });
          console.log(options.json ? JSON.stringify(result) : formatTruthBench(result));
          return;
        }
        if (target === 'recall') {
          await runRecallBench(options);
          return;
        }
        if (target === 'distill') {
          const result = benchDistill(options.sessions ?? 2_000);
          console.log(options.json ? JSON.stringify(result) : formatDistillBench(result));
          return;
        }
        if (target === 'observe') {
          const result = await benchObserve({
            sessions: options.sessions ?? 2_000,
            batchCalls: options.batch ?? 500,
            distributed: options.distributed ?? false,
            neo4jUrl: loadConfig().neo4j.url,
          });
          console.log(options.json ? JSON.stringify(result) : formatObserveBench(result));
          return;
        }
        if (target !== 'segment') {
          console.error(
            `engram bench ${target}: not available yet (available: segment, observe, distill, recall, truth, hook, friction)`,
          );
          process.exitCode = 2;
          return;
        }
        if (options.distributed) {
          const prompts = syntheticPrompts(options.prompts ?? 20_000, 500);
          const result = await benchSegmentEndToEnd(loadConfig(), prompts);
          console.log(
            options.json
              ? JSON.stringify(result)
              : `segment end to end: ${result.eventsPerSecond.toLocaleString('en')} events/s ` +
                  `(${result.events} events in ${result.seconds} s, publish ${result.publishPerSecond.toLocaleString('en')}/s, ` +
                  `start-up ${result.startupSeconds} s apart, max lag ${result.maxLag}, ${result.partitions} partitions, ${result.cores} cores; target ≥ 10,000)`,
          );
          return;
        }
        const result = benchSegmentCore(options.prompts ?? 200_000, 2_000, options.dataset);
        if (options.json) {
          console.log(JSON.stringify(result));
          return;
        }
        console.log(
          `segment core (keyword, ${result.dataset}): ${result.promptsPerSecond.toLocaleString('en')} prompts/s ` +
            `(${result.prompts} prompts, ${result.sessions} sessions, ${result.seconds} s, ` +
            `${result.boundaries} boundaries, heap ${result.heapUsedMb} MB, ${result.cores} cores; target ≥ 200,000)`,
        );
      },
    );
}
