import { loadConfig, type EngramConfig } from '@engram/config';
import { decodeReplayLines, topicOfRecord, type Typed } from '@engram/contracts';
import type { Command } from 'commander';
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
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
  /** Wait until these groups' committed offsets reach the end of the topics written. */
  wait?: { groups: string[]; timeoutMs: number };
}

/**
 * Publishes a replay file (SPEC §12): every valid line to the topic its `type` decides, in file
 * order; every invalid line reported with its number and dead-lettered, never dropped.
 */
export async function runReplay(run: ReplayRun): Promise<ReplaySummary> {
  const { config, target } = run;
  const { events, errors } = decodeReplayLines(run.content);
  for (const error of errors) {
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
  for (const { topic, events: batch } of runs) {
    await target.port.publish(prefixedCodec(config, topic), batch);
  }
  const written = [...new Set(runs.map((r) => config.topicPrefix + r.topic))];
  const caughtUp = run.wait ? await waitForGroups(target, written, run.wait) : null;
  return { published: events.length, rejected: errors.length, caughtUp };
}

/** True once every group has committed past the end offsets the topics have now. */
async function waitForGroups(
  target: ReplayTarget,
  topics: string[],
  wait: { groups: string[]; timeoutMs: number },
): Promise<boolean> {
  const ends = new Map<string, number[]>();
  for (const topic of topics) ends.set(topic, await target.port.endOffsets(topic));
  const deadline = Date.now() + wait.timeoutMs;
  for (;;) {
    let done = true;
    for (const group of wait.groups) {
      for (const [topic, topicEnds] of ends) {
        const committed = await target.committedOffsets(group, topic);
        if (topicEnds.some((end, p) => (committed.get(p) ?? 0) < end)) done = false;
      }
    }
    if (done) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The consumer groups `--wait` waits for: the services that run today. */
export function serviceGroups(config: EngramConfig): string[] {
  return [config.topicPrefix + config.segmenter.groupId];
}

export const DEFAULT_DATA_DIR = join(homedir(), '.engram');

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
            ...(options.wait && {
              wait: { groups: serviceGroups(config), timeoutMs: (options.timeout ?? 300) * 1000 },
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
