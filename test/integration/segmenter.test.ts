import { EventPublisher } from '@engram/kafka';
import { segmenterSettings } from '@engram/core';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, inject } from 'vitest';
import { prefixedTopics } from '../../apps/segmenter/src/segmenter.module';
import {
  ensureSegmenterTopics,
  segmenterCodecs,
  startSegmenter,
} from '../../apps/segmenter/src/segmenter.runtime';
import type { SegmenterTopics } from '../../apps/segmenter/src/segmenter.stage';
import { readAllCommitted, testKafka, testRegistry, topicSize } from './support/kafka-fixtures';
import { recordedStream, type RecordedStream } from './support/recorded-sessions';
import { uniqueName } from './support/unique';

const ROOT = join(__dirname, '..', '..');
const SESSIONS = 60;
const PARTITIONS = 3;
const KILLS = 5;
/** How long a round waits for the group to commit past where it stood. */
const COMMIT_WAIT_MS = 90_000;

/** The sum of the group's committed offsets on its input topics (0 before any commit). */
async function committedInputOffsets(groupId: string, inputs: string[]): Promise<number> {
  const admin = testKafka().admin();
  await admin.connect();
  try {
    const topics = await admin.fetchOffsets({ groupId, topics: inputs });
    return topics
      .flatMap((topic) => topic.partitions)
      .reduce((sum, partition) => sum + Math.max(0, Number(partition.offset)), 0);
  } finally {
    await admin.disconnect();
  }
}

/**
 * Waits until the group commits past `before`; null when the whole input was already committed
 * (nothing left for this round). Fails when the process exits or nothing is committed in time.
 */
async function waitForCommitPast(
  groupId: string,
  inputs: string[],
  before: number,
  child: ChildProcess,
): Promise<number | null> {
  const total = await inputSize(inputs);
  if (before >= total) return null;
  const deadline = Date.now() + COMMIT_WAIT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`segmenter exited with ${child.exitCode}`);
    const committed = await committedInputOffsets(groupId, inputs);
    if (committed > before) return committed;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`segmenter committed nothing past offset sum ${before} in ${COMMIT_WAIT_MS} ms`);
}

async function inputSize(inputs: string[]): Promise<number> {
  const sizes = await Promise.all(inputs.map((topic) => topicSize(testKafka(), topic)));
  return sizes.reduce((sum, size) => sum + size, 0);
}

async function publishRecording(topics: SegmenterTopics, stream: RecordedStream): Promise<void> {
  const kafka = testKafka();
  await ensureSegmenterTopics(kafka, topics, PARTITIONS);
  const publisher = new EventPublisher(kafka, testRegistry());
  const codecs = segmenterCodecs(topics);
  await publisher.connect();
  try {
    await publisher.publish(codecs.prompts, stream.prompts);
    await publisher.publish(codecs.toolCalls, stream.toolCalls);
    await publisher.publish(codecs.lifecycle, stream.lifecycle);
  } finally {
    await publisher.disconnect();
  }
}

/** A boundary record by what it says (chaining parents depend on cross-partition timing). */
async function boundaryLines(topics: SegmenterTopics, atLeast: number): Promise<string[]> {
  const registry = testRegistry();
  const messages = await readAllCommitted(testKafka(), topics.boundaries, atLeast);
  const lines = await Promise.all(
    messages.map(async (message) => {
      const value = await registry.decode<Record<string, Record<string, unknown>>>(message.value);
      const [[type, record]] = Object.entries(value);
      const { parentEpisodeId: _ignored, ...rest } = record;
      return `${type} ${JSON.stringify(rest)}`;
    }),
  );
  return lines.sort();
}

describe('segmenter service on real Kafka', () => {
  const stream = recordedStream(SESSIONS);
  const settings = segmenterSettings();
  let reference: string[] = [];

  beforeAll(() => {
    // The killed runs are separate processes running the compiled service.
    execFileSync('npm', ['run', '-s', 'build'], { cwd: ROOT, stdio: 'inherit' });
  });

  it('should segment a recorded stream into opened/closed episodes and annotated episodes', async () => {
    const prefix = `${uniqueName('it-seg-ref')}.`;
    const topics = prefixedTopics(prefix);
    await publishRecording(topics, stream);
    const runtime = await startSegmenter({
      brokers: inject('infra').kafkaBrokers,
      registryUrl: inject('infra').registryUrl,
      settings,
      topics,
      groupId: `${prefix}segmenter`,
      partitions: PARTITIONS,
      sweepIntervalMs: 500,
      retry: { initialMs: 100, maxMs: 2_000 },
    });
    try {
      // Every session opens at least one episode per task.
      reference = await boundaryLines(topics, SESSIONS * 3);
    } finally {
      await runtime.stop();
    }
    const opened = reference.filter((line) => line.startsWith('engram.v1.EpisodeOpened'));
    const closed = reference.filter((line) => line.startsWith('engram.v1.EpisodeClosed'));
    expect(opened.length).toBeGreaterThanOrEqual(SESSIONS * 3);
    expect(closed.filter((line) => line.includes('"reason":"session_end"'))).toHaveLength(
      (SESSIONS * 4) / 5,
    );
    expect(closed.some((line) => line.includes('"reason":"intent_shift"'))).toBe(true);
    expect(new Set(reference).size).toBe(reference.length);
  });

  it("should produce exactly the uninterrupted run's boundaries when SIGKILLed again and again", async () => {
    expect(reference.length).toBeGreaterThan(0);
    const prefix = `${uniqueName('it-seg-kill')}.`;
    const topics = prefixedTopics(prefix);
    await publishRecording(topics, stream);
    const env = {
      ...process.env,
      ENGRAM_KAFKA_BROKERS: inject('infra').kafkaBrokers.join(','),
      ENGRAM_SCHEMA_REGISTRY_URL: inject('infra').registryUrl,
      ENGRAM_TOPIC_PREFIX: prefix,
      ENGRAM_SEGMENTER_PARTITIONS: String(PARTITIONS),
      ENGRAM_SEGMENTER_SWEEP_MS: '500',
      // The reference run's mode (segmenterSettings(): keyword); the service's default is hybrid.
      ENGRAM_SEGMENTER_MODE: settings.mode,
      ENGRAM_RETRY_INITIAL_MS: '100',
      ENGRAM_RETRY_MAX_MS: '2000',
      // A killed member's partitions move after 8 s instead of 30 s: five kills fit in the test.
      ENGRAM_KAFKA_SESSION_TIMEOUT_MS: '8000',
    };
    const start = (): ChildProcess =>
      spawn(process.execPath, [join(ROOT, 'dist/apps/segmenter/src/main.js')], {
        env,
        stdio: 'ignore',
      });
    // Issue #19, finding 6: each kill comes after a commit this run made (the group's committed
    // input offsets moved past where they stood when the process started), plus 0–150 ms, so the
    // kills land between and inside transactions rather than before anything happened.
    const groupId = `${prefix}engram-segmenter`;
    const inputs = [topics.prompts, topics.toolCalls, topics.lifecycle];
    const kills: number[] = [];
    for (let round = 0; round < KILLS; round += 1) {
      const before = await committedInputOffsets(groupId, inputs);
      const child = start();
      const committed = await waitForCommitPast(groupId, inputs, before, child);
      if (committed === null) break; // everything was consumed: nothing is left to interrupt
      await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 150)));
      kills.push(committed);
      console.log(
        `[segmenter] round ${round + 1}: SIGKILL after committed input offsets ${committed}`,
      );
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));
    }
    // A restarted member takes whole partition backlogs per batch, so the input can run out before
    // the fifth kill (4–5 in local runs); fewer than three would no longer test restarts.
    expect(kills.length).toBeGreaterThanOrEqual(3);
    const last = start();
    try {
      const lines = await boundaryLines(topics, reference.length);
      expect(lines).toEqual(reference);
    } finally {
      last.kill('SIGTERM');
      await new Promise((resolve) => last.once('exit', resolve));
    }
    console.log(
      `[segmenter] ${kills.length} kills, each after a commit (input offsets committed: ${kills.join(', ')}); ${reference.length} boundaries`,
    );
  });
});
