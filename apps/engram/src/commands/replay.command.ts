import { loadConfig, type EngramConfig } from '@engram/config';
import {
  decodeReplayLine,
  decodeReplayLineBytes,
  decodeReplayLines,
  ReplayLineError,
  topicOfRecord,
  type ReplayEvent,
  type Typed,
} from '@engram/contracts';
import {
  countDeadLetters,
  deadLetterView,
  REPLAY_DEAD_LETTER_SERVICE,
  type DeadLetterCount,
} from '@engram/core';
import type { Command } from 'commander';
import { createReadStream, existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_DISTILLER_GROUP, DEFAULT_DISTILLER_TOPICS } from '@engram/app-distiller';
import { DEFAULT_OBSERVER_GROUP, DEFAULT_OBSERVER_TOPICS } from '@engram/app-observer';
import { DEFAULT_INDEXER_GROUP_ID } from '@engram/app-retrieval';
import { deadLettersSince } from '../dead-letters';
import { progressBar, type Progress } from '../progress';
import { redactReplayItem } from './replay-redaction';
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
  /**
   * With `wait`: what the services dead-lettered while this replay was processed, per topic and
   * reason (the replay's own rejected lines are in `rejected`, not here); null without `wait` or
   * when the target cannot read its dead letters.
   */
  deadLettered: DeadLetterCount[] | null;
}

/** `engram replay`'s exit codes (README). */
export const REPLAY_EXIT = {
  ok: 0,
  /** Some lines were rejected (reported with their line numbers, in the DLQ). */
  rejectedLines: 3,
  /** `--wait` timed out. */
  timedOut: 4,
  /** `--wait`: the services dead-lettered some of the events. */
  deadLettered: 5,
} as const;

/** The exit code of a replay or import: time-out first, then rejected lines, then dead letters. */
export function replayExitCode(summary: Omit<ReplaySummary, 'published'>): number {
  if (summary.caughtUp === false) return REPLAY_EXIT.timedOut;
  if (summary.rejected > 0) return REPLAY_EXIT.rejectedLines;
  if ((summary.deadLettered?.length ?? 0) > 0) return REPLAY_EXIT.deadLettered;
  return REPLAY_EXIT.ok;
}

export interface ReplayRun {
  config: EngramConfig;
  /** The file's content; `file` (streamed) is the CLI's way. */
  content?: string;
  /** A replay file, read as a stream: memory stays constant whatever its size. */
  file?: string;
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
  if (run.file !== undefined) {
    return publishReplayStream(run, decodeReplayStream(fileLines(run.file)));
  }
  const { events, errors } = decodeReplayLines(run.content ?? '');
  return publishReplay(run, events, errors);
}

/**
 * The lines of a file as bytes (without the newline), 1-based, read in 64 KiB chunks: only one
 * line is held at a time. Bytes, not text, so that invalid UTF-8 is seen (decodeReplayLineBytes)
 * rather than turned into U+FFFD by a decoding stream.
 */
export async function* fileLines(path: string): AsyncGenerator<{ line: number; bytes: Buffer }> {
  let pending: Buffer[] = [];
  let line = 0;
  for await (const chunk of createReadStream(path, { highWaterMark: 64 * 1024 })) {
    const bytes = chunk as Buffer;
    let start = 0;
    for (let end = bytes.indexOf(10, start); end !== -1; end = bytes.indexOf(10, start)) {
      pending.push(bytes.subarray(start, end));
      yield { line: ++line, bytes: Buffer.concat(pending) };
      pending = [];
      start = end + 1;
    }
    if (start < bytes.length) pending.push(Buffer.from(bytes.subarray(start)));
  }
  const last = Buffer.concat(pending);
  if (last.length > 0) yield { line: line + 1, bytes: last };
}

/** Replay lines → events or line errors, in file order (blank lines skipped). */
export async function* decodeReplayStream(
  lines: AsyncIterable<{ line: number; bytes: Uint8Array }>,
): AsyncGenerator<ReplayEvent | ReplayLineError> {
  for await (const { line, bytes } of lines) {
    try {
      const text = decodeReplayLineBytes(bytes, line);
      if (text.trim() === '') continue;
      yield decodeReplayLine(text, line);
    } catch (error) {
      if (!(error instanceof ReplayLineError)) throw error;
      yield error;
    }
  }
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
  return publishReplayStream(run, [...rejected, ...events], events.length);
}

/** Events per publish call (and the most a replay holds in memory). */
const REPLAY_BATCH = 1_000;

/**
 * publishReplay over a stream of decoded lines, in order: a rejected line is reported and
 * dead-lettered when it comes, events are published in runs of one topic (at most REPLAY_BATCH).
 * With `wait`, the services' dead-letter topics are read before and after, and what they
 * dead-lettered in between is counted per topic and reason.
 */
export async function publishReplayStream(
  run: Omit<ReplayRun, 'content'>,
  items: AsyncIterable<ReplayEvent | ReplayLineError> | Iterable<ReplayEvent | ReplayLineError>,
  total?: number,
): Promise<ReplaySummary> {
  const { config, target } = run;
  const deadLetterStore = run.wait ? target.deadLetters : undefined;
  const before = deadLetterStore ? await deadLetterStore.ends() : null;
  const bar = run.progress?.('publishing');
  if (total !== undefined) bar?.total(total);
  let published = 0;
  let rejected = 0;
  // File order across topics: a tool call recorded before the next prompt is published before
  // it, as the agent did (the segmenter annotates an episode with what arrived before its close).
  const batch: { topic: string; events: Typed[] } = { topic: '', events: [] };
  const flush = async () => {
    if (batch.events.length === 0) return;
    const events = batch.events.splice(0);
    await target.port.publish(prefixedCodec(config, batch.topic), events);
    published += events.length;
    if (total === undefined) bar?.total(published);
    bar?.advance(events.length);
  };
  try {
    for await (const unredacted of items) {
      // Secrets out before anything is published or dead-lettered (replay-redaction.ts).
      const item = redactReplayItem(unredacted);
      // A line error (ReplayLineError, or import's TranscriptLineError of the same shape).
      if (!('event' in item)) {
        rejected += 1;
        run.errors.write(`${item.message}\n`);
        const topic = item.recordType
          ? topicOfRecord(item.recordType as Typed['type']).topic
          : REPLAY_DLQ_SOURCE;
        await target.deadLetter(item, config.topicPrefix + topic);
        continue;
      }
      if (batch.topic !== item.topic || batch.events.length >= REPLAY_BATCH) await flush();
      batch.topic = item.topic;
      batch.events.push(item.event);
    }
    await flush();
  } finally {
    bar?.stop();
  }
  const caughtUp = run.wait
    ? await waitForServices(target, run.wait, run.progress?.('processing'))
    : null;
  const deadLettered =
    deadLetterStore && before
      ? countDeadLetters(
          (await deadLettersSince(deadLetterStore, before))
            .map(deadLetterView)
            .filter((view) => view.service !== REPLAY_DEAD_LETTER_SERVICE),
        )
      : null;
  return { published, rejected, caughtUp, deadLettered };
}

/** What the services dead-lettered, for stderr: one line per topic and reason. */
export function formatDeadLettered(counts: readonly DeadLetterCount[]): string {
  const total = counts.reduce((sum, count) => sum + count.count, 0);
  return [
    `the services dead-lettered ${total} record(s) (engram dlq list shows them):`,
    ...counts.map(
      (count) =>
        `  ${count.count} × ${count.topic}: ${count.errorClass}` +
        (count.example ? ` (e.g. ${truncateLine(count.example, 160)})` : ''),
    ),
  ].join('\n');
}

function truncateLine(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ');
  return line.length <= max ? line : `${line.slice(0, max - 1)}…`;
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
          DEFAULT_DISTILLER_TOPICS.memoryCandidates,
        ),
      ],
    },
    {
      groupId: config.topicPrefix + DEFAULT_INDEXER_GROUP_ID,
      // Its one topology consumes the tool calls too, in both modes (distributed: their index).
      topics: prefixed(
        'agent.prompts.v1',
        'agent.tool-calls.v1',
        'memory.episodes.v1',
        'memory.memories.v1',
      ),
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
        if (!existsSync(options.file)) {
          console.error(`no such file: ${options.file}`);
          process.exitCode = 2;
          return;
        }
        const target = options.distributed
          ? await distributedTarget(config)
          : await embeddedTarget(config, options.dataDir);
        try {
          const summary = await runReplay({
            config,
            file: options.file,
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
              (summary.caughtUp === true
                ? summary.deadLettered?.length
                  ? '; every event processed, some dead-lettered by the services'
                  : '; every event processed'
                : ''),
          );
          if (summary.caughtUp === false) {
            console.error(
              'timed out waiting for the services to process the events: is `engram start` running?',
            );
          }
          if (summary.deadLettered?.length) console.error(formatDeadLettered(summary.deadLettered));
          process.exitCode = replayExitCode(summary);
        } finally {
          await target.close();
        }
      },
    );
}
