import { segmenterSettings } from '@engram/core';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, inject } from 'vitest';
import { prefixedTopics } from '../../apps/segmenter/src/segmenter.module';
import { startSegmenter } from '../../apps/segmenter/src/segmenter.topology';
import { testPlatform } from './support/kafka-fixtures';
import { FAST_TAKEOVER_ENV, killAfterCommits } from './support/kill-rounds';
import { serviceProcess } from './support/service-process';
import { recordedStream, type RecordedStream } from './support/recorded-sessions';
import { boundaryLines, publishRecording, segmenterPublisher } from './support/segmenter-recording';
import { uniqueName } from './support/unique';

const ROOT = join(__dirname, '..', '..');
const SESSIONS = 60;
const PARTITIONS = 3;
const KILLS = 5;

/** The i-th of KILLS + 1 slices of whole sessions (sessions are numbered in time order). */
function sliceOf(stream: RecordedStream, i: number): RecordedStream {
  const inSlice = (event: { sessionId: string }) =>
    Math.floor((Number(event.sessionId.split('-').at(-1)) * (KILLS + 1)) / SESSIONS) === i;
  return {
    prompts: stream.prompts.filter(inSlice),
    toolCalls: stream.toolCalls.filter(inSlice),
    lifecycle: stream.lifecycle.filter(inSlice),
  };
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
    await publishRecording(topics, stream, PARTITIONS);
    const platform = await testPlatform();
    const runtime = await startSegmenter({
      platform,
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
      await platform.close();
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
    await publishRecording(topics, sliceOf(stream, 0), PARTITIONS);
    const env = {
      ...FAST_TAKEOVER_ENV,
      ENGRAM_KAFKA_BROKERS: inject('infra').kafkaBrokers.join(','),
      ENGRAM_SCHEMA_REGISTRY_URL: inject('infra').registryUrl,
      ENGRAM_TOPIC_PREFIX: prefix,
      ENGRAM_SEGMENTER_PARTITIONS: String(PARTITIONS),
      ENGRAM_SEGMENTER_SWEEP_MS: '500',
      // The reference run's mode (segmenterSettings(): keyword); the service's default is hybrid.
      ENGRAM_SEGMENTER_MODE: settings.mode,
      ENGRAM_RETRY_INITIAL_MS: '100',
      ENGRAM_RETRY_MAX_MS: '2000',
    };
    const service = serviceProcess('segmenter', env);
    // Issue #19, finding 6: each kill comes after a commit this process made, plus 0–150 ms. The
    // sessions arrive in KILLS + 1 slices, one before each round, so every round has input left
    // (all at once, a restarted member took whole partition backlogs and the input could run out
    // after two kills).
    const publisher = await segmenterPublisher(topics);
    const kills: number[] = [];
    try {
      for (let round = 1; round <= KILLS; round += 1) {
        if (round > 1) await publisher.publish(sliceOf(stream, round - 1));
        const killedAt = await killAfterCommits(service, {
          groupId: `${prefix}engram-segmenter`,
          inputs: [topics.prompts, topics.toolCalls, topics.lifecycle],
          kills: 1,
          onKill: (_, committed) =>
            console.log(
              `[segmenter] round ${round}: SIGKILL after committed input offsets ${committed}`,
            ),
        });
        kills.push(...killedAt);
      }
      await publisher.publish(sliceOf(stream, KILLS));
    } finally {
      await publisher.disconnect();
    }
    expect(kills.length).toBe(KILLS);
    const last = service.start();
    try {
      const lines = await boundaryLines(topics, reference.length);
      expect(lines).toEqual(reference);
    } finally {
      await service.stop(last, 'SIGTERM');
    }
    console.log(
      `[segmenter] ${kills.length} kills, each after a commit (input offsets committed: ${kills.join(', ')}); ${reference.length} boundaries`,
    );
  });
});
