import { loadConfig, type EngramConfig } from '@engram/config';
import {
  decodeReplayLines,
  topicOfRecord,
  type ReplayEvent,
  type ReplayLineError,
  type Typed,
} from '@engram/contracts';
import type { Command } from 'commander';
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_DISTILLER_GROUP } from '../../../distiller/src/distiller.runtime';
import { DEFAULT_DISTILLER_TOPICS } from '../../../distiller/src/distiller.stage';
import { DEFAULT_OBSERVER_GROUP } from '../../../observer/src/observer.runtime';
import { DEFAULT_OBSERVER_TOPICS } from '../../../observer/src/observer.stage';
import { DEFAULT_INDEXER_GROUP_ID } from '../../../retrieval/src/retrieval.runtime';
import { progressBar, type Progress } from '../progress';
import {
  distributedTarget,
  embeddedTarget,
  prefixedCodec,
  REPLAY_DLQ_SOURCE,
  type ReplayTarget,
} from './replay-targets';

export interface ReplaySummary {
  published: number;
  rejected: number;
  /** Whether every consumer group caught up (only with `wait`). */
  caughtUp: boolean | null;
}

export interface ReplayRun {
  config: EngramConfig;
  content: string;
  target: ReplayTarget;
  errors: NodeJS.WritableStream;
  /** Wait until these groups' committed offsets reach the end of the topics they consume. */
  wait?: { groups: WaitGroup[]; timeoutMs: number };
  /** A progress bar per phase (publishing, then waiting for the services); none by default. */
  progress?: ReplayProgress;
}

/** Opens the bar of one phase when it starts (bars draw from creation, one at a time). */
export type ReplayProgress = (phase: 'publishing' | 'processing') => Progress;

/** A consumer group `--wait` waits for, with the topics (prefixed names) it consumes. */
export interface WaitGroup {
  groupId: string;
  topics: string[];
}

/**
 * Publishes a replay file (SPEC §12): every valid line to the topic its `type` decides, in file
 * order; every invalid line reported with its number and dead-lettered, never dropped.
 */
export async function runReplay(run: ReplayRun): Promise<ReplaySummary> {
  const { events, errors } = decodeReplayLines(run.content);
  return publishReplay(run, events, errors);
}

/**
 * Dead-letters the rejected lines (each reported on `errors`), publishes the events in order and,
 * with `wait`, waits until the services have processed them: `engram replay` and `engram import`.
 */
export async function publishReplay(
  run: Omit<ReplayRun, 'content'>,
  events: readonly ReplayEvent[],
  /** Lines that could not become events: reported, then kept in a dead-letter topic. */
  rejected: readonly ReplayLineError[],
): Promise<ReplaySummary> {
  const { config, target } = run;
  for (const error of rejected) {
    run.errors.write(`${error.message}\n`);
    const topic = error.recordType
      ? topicOfRecord(error.recordType as Typed['type']).topic
      : REPLAY_DLQ_SOURCE;
    await target.deadLetter(error, config.topicPrefix + topic);
  }
  // File order across topics: a tool call recorded before the next prompt is published before
  // it, as the agent did (the segmenter annotates an episode with what arrived before its close).
  const runs: { topic: string; events: Typed[] }[] = [];
  for (const { topic, event } of events) {
    const last = runs[runs.length - 1];
    if (last?.topic === topic && last.events.length < 1_000) last.events.push(event);
    else runs.push({ topic, events: [event] });
  }
  const bar = run.progress?.('publishing');
  bar?.total(events.length);
  try {
    for (const { topic, events: batch } of runs) {
      await target.port.publish(prefixedCodec(config, topic), batch);
      bar?.advance(batch.length);
    }
  } finally {
    bar?.stop();
  }
  const caughtUp = run.wait
    ? await waitForServices(target, run.wait, run.progress?.('processing'))
    : null;
  return { published: events.length, rejected: rejected.length, caughtUp };
}

/**
 * True once every group has committed up to the end of every topic it consumes, in two passes in
 * a row. End offsets are read afresh each pass, so work flows down the chain — the segmenter's
 * episodes, the observer's own repartition topic — before the wait ends: a stage commits its
 * outputs and its input offsets in one transaction, so a caught-up input means its outputs exist.
 * The bar shows the records processed against the largest backlog seen.
 */
export async function waitForServices(
  target: ReplayTarget,
  wait: { groups: WaitGroup[]; timeoutMs: number },
  bar?: Progress,
): Promise<boolean> {
  const deadline = Date.now() + wait.timeoutMs;
  let cleanPasses = 0;
  let peak = 0;
  let shown = 0;
  try {
    while (cleanPasses < 2) {
      const lag = await serviceLag(target, wait.groups);
      cleanPasses = lag === 0 ? cleanPasses + 1 : 0;
      peak = Math.max(peak, lag);
      bar?.total(peak);
      if (peak - lag > shown) {
        bar?.advance(peak - lag - shown);
        shown = peak - lag;
      }
      if (cleanPasses < 2) {
        if (Date.now() > deadline) return false;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    return true;
  } finally {
    bar?.stop();
  }
}

/** Records the groups have yet to process: end offset minus committed offset, summed. */
async function serviceLag(target: ReplayTarget, groups: WaitGroup[]): Promise<number> {
  let lag = 0;
  for (const { groupId, topics } of groups) {
    for (const topic of topics) {
      const ends = await target.port.endOffsets(topic);
      const committed = await target.committedOffsets(groupId, topic);
      ends.forEach((end, p) => (lag += Math.max(0, end - (committed.get(p) ?? 0))));
    }
  }
  return lag;
}

/**
 * The consumer groups `--wait` waits for, each on every topic it consumes: the services `engram
 * start` runs, the same embedded and on Kafka. The indexer is waited for on the episodes and
 * memories the other services wrote too, so a following recall sees them. (On Kafka a topic
 * written in transactions ends with a commit marker; the consumers commit past it, else
 * "committed = end" would never hold there.)
 */
export function serviceGroups(config: EngramConfig): WaitGroup[] {
  const prefixed = (...topics: string[]) => topics.map((topic) => config.topicPrefix + topic);
  const agentInputs = prefixed('agent.prompts.v1', 'agent.tool-calls.v1', 'agent.lifecycle.v1');
  return [
    { groupId: config.topicPrefix + config.segmenter.groupId, topics: agentInputs },
    {
      groupId: config.topicPrefix + DEFAULT_OBSERVER_GROUP,
      topics: prefixed(
        'agent.tool-calls.v1',
        'agent.lifecycle.v1',
        DEFAULT_OBSERVER_TOPICS.episodes,
        DEFAULT_OBSERVER_TOPICS.projectWork,
      ),
    },
    {
      groupId: config.topicPrefix + DEFAULT_DISTILLER_GROUP,
      topics: [
        ...agentInputs,
        ...prefixed(
          'memory.episode-boundaries.v1',
          'memory.episodes.v1',
          DEFAULT_DISTILLER_TOPICS.narratives,
          DEFAULT_DISTILLER_TOPICS.reflector,
        ),
      ],
    },
    {
      groupId: config.topicPrefix + DEFAULT_INDEXER_GROUP_ID,
      topics: prefixed('agent.prompts.v1', 'memory.episodes.v1', 'memory.memories.v1'),
    },
  ];
}

export const DEFAULT_DATA_DIR = join(homedir(), '.engram');

/** The CLI's bars (stderr, only on a terminal). */
export const cliProgress: ReplayProgress = (phase) =>
  phase === 'publishing'
    ? progressBar('publishing', { unit: 'events' })
    : progressBar('processing', { unit: 'records' });

export function registerReplayCommand(program: Command): void {
  program
    .command('replay')
    .description('publish a recorded event file (JSON lines, one event per line) into Engram')
    .requiredOption('--file <path>', 'the events, one JSON object per line with its `type`')
    .option('--wait', 'return only when the running services have processed every event')
    .option('--timeout <seconds>', 'give up waiting after this long (default 300)', parseFloat)
    .option('--data-dir <dir>', 'embedded mode: the data directory', DEFAULT_DATA_DIR)
    .option('--distributed', 'publish to the configured Kafka instead of the embedded log')
    .action(
      async (options: {
        file: string;
        wait?: boolean;
        timeout?: number;
        dataDir: string;
        distributed?: boolean;
      }) => {
        const config = loadConfig();
        const content = await readFile(options.file, 'utf8');
        const target = options.distributed
          ? await distributedTarget(config)
          : await embeddedTarget(config, options.dataDir);
        try {
          const summary = await runReplay({
            config,
            content,
            target,
            errors: process.stderr,
            progress: cliProgress,
            ...(options.wait && {
              wait: {
                groups: serviceGroups(config),
                timeoutMs: (options.timeout ?? 300) * 1000,
              },
            }),
          });
          console.log(
            `${summary.published} event(s) published, ${summary.rejected} line(s) rejected ` +
              `to the dead-letter topics` +
              (summary.caughtUp === true ? '; every event processed' : ''),
          );
          if (summary.caughtUp === false) {
            console.error(
              'timed out waiting for the services to process the events: is `engram start` running?',
            );
            process.exitCode = 4;
          } else if (summary.rejected > 0) process.exitCode = 3;
        } finally {
          await target.close();
        }
      },
    );
}
