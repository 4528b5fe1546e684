import { segmenterSettings, StreamSegmenter, type SegmenterPrompt } from '@engram/core';
import type { Command } from 'commander';
import { cpus } from 'node:os';

/** Realistic prompt shapes: long intents, follow-ups, terse replies. */
const TEXTS = [
  'fix the token refresh race in src/auth/refresh.ts when logout happens during refresh',
  'the refresh token race still happens when two tabs refresh at the same time',
  'yes',
  'upgrade the elasticsearch client to 8.19 and regenerate the index templates',
  'ok push',
  'why does the kafka consumer stall after a rebalance in the segmenter service',
  'make the consumer resolve offsets of control records after a rebalance',
  '5,6',
  'write the architecture notes for the neo4j co-access graph and its constraints',
  'profile the recall latency of the retrieval service under 50 concurrent queries',
];

function syntheticPrompts(count: number, sessions: number): SegmenterPrompt[] {
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
      text: TEXTS[(turn * 7 + session) % TEXTS.length],
      parentEpisodeId: null,
    };
  });
}

export interface SegmentCoreBench {
  benchmark: 'segment-core';
  mode: 'keyword';
  prompts: number;
  sessions: number;
  seconds: number;
  promptsPerSecond: number;
  boundaries: number;
  openSessionsAtEnd: number;
  heapUsedMb: number;
  cores: number;
}

/** Prompts/s of the pure segmenter core on one core (keyword mode), after a warm-up pass. */
export function benchSegmentCore(prompts = 200_000, sessions = 2_000): SegmentCoreBench {
  const input = syntheticPrompts(prompts, sessions);
  const run = () => {
    const segmenter = new StreamSegmenter({ settings: segmenterSettings() });
    let boundaries = 0;
    const started = process.hrtime.bigint();
    for (const prompt of input) if (segmenter.push(prompt).decision.boundary) boundaries += 1;
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    return { seconds, boundaries, open: segmenter.openSessions };
  };
  run();
  const { seconds, boundaries, open } = run();
  return {
    benchmark: 'segment-core',
    mode: 'keyword',
    prompts,
    sessions,
    seconds: Number(seconds.toFixed(3)),
    promptsPerSecond: Math.round(prompts / seconds),
    boundaries,
    openSessionsAtEnd: open,
    heapUsedMb: Math.round(process.memoryUsage().heapUsed / 2 ** 20),
    cores: cpus().length,
  };
}

export function registerBenchCommand(program: Command): void {
  program
    .command('bench')
    .description('benchmarks; with --json the last line is one JSON object of the figures')
    .argument('<target>', 'segment (more targets land with their services)')
    .option('--prompts <n>', 'prompts to segment', (v) => Number.parseInt(v, 10), 200_000)
    .option('--json', 'print the figures as one JSON line')
    .action((target: string, options: { prompts: number; json?: boolean }) => {
      if (target !== 'segment') {
        console.error(`engram bench ${target}: not available yet (available: segment)`);
        process.exitCode = 2;
        return;
      }
      const result = benchSegmentCore(options.prompts);
      if (options.json) {
        console.log(JSON.stringify(result));
        return;
      }
      console.log(
        `segment core (keyword): ${result.promptsPerSecond.toLocaleString('en')} prompts/s ` +
          `(${result.prompts} prompts, ${result.sessions} sessions, ${result.seconds} s, ` +
          `${result.boundaries} boundaries, heap ${result.heapUsedMb} MB, ${result.cores} cores; target ≥ 200,000)`,
      );
    });
}
