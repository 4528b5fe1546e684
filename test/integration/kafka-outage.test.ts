// Issue #19: Kafka outages mid-stream. The compiled segmenter service runs as a child process on
// real Kafka and Schema Registry; a recording arrives in three parts. Once the service has
// committed part of it, the broker goes away for longer than the clients' timeouts: hung (SIGSTOP /
// docker pause) for 32 s while the next part is being published (the connected publisher's
// idempotent producer waits it out), or stopped for real and restarted, its data kept. The
// service must pause and retry (never exit, never skip), and its boundaries must equal an
// uninterrupted in-process run's on the same recording: 0 lost, 0 duplicated; the input topics
// must hold each published event exactly once. The shared broker is always brought back
// (afterAll and a detached watchdog, support/broker-outage.ts).
import type { Typed } from '@engram/contracts';
import { segmenterSettings } from '@engram/core';
import { ensureTopics, RecoverableTransactionalProducer } from '@engram/kafka';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { prefixedTopics } from '../../apps/segmenter/src/segmenter.module';
import { ensureSegmenterTopics, startSegmenter } from '../../apps/segmenter/src/segmenter.topology';
import { freePort } from '../support/free-port';
import { brokerOutage, type BrokerOutage } from './support/broker-outage';
import { committedOffsets } from './support/kill-rounds';
import {
  readAllCommitted,
  testKafka,
  testPlatform,
  topicSize,
  withTestPlatform,
} from './support/kafka-fixtures';
import { recordedStream, type RecordedStream } from './support/recorded-sessions';
import { boundaryLines, publishRecording, segmenterPublisher } from './support/segmenter-recording';
import { serviceProcess } from './support/service-process';
import { eventually, uniqueName } from './support/unique';

const ROOT = join(__dirname, '..', '..');
const SESSIONS = 30;
const PARTS = 3;
const PARTITIONS = 3;
/** Past kafkajs' 30 s request timeout and the group's 30 s session timeout. */
const HANG_MS = 32_000;
/**
 * Plus the broker's shutdown and restart (10 s and more): longer than kafkajs' connection retries
 * (about 25 s), so clients reconnect from scratch, and often than the 60 s transaction timeout.
 */
const STOP_MS = 15_000;
const RETRY = { initialMs: 100, maxMs: 2_000 };

/** The recording's sessions split into `PARTS` parts, each with its sessions' every event. */
function parts(stream: RecordedStream): RecordedStream[] {
  const partOf = (event: Typed) => Number(event.sessionId.split('-').pop()) % PARTS;
  return Array.from({ length: PARTS }, (_, part) => ({
    prompts: stream.prompts.filter((event) => partOf(event) === part),
    toolCalls: stream.toolCalls.filter((event) => partOf(event) === part),
    lifecycle: stream.lifecycle.filter((event) => partOf(event) === part),
  }));
}

/** When `work` finished; its failure is held (not left unhandled) until the test asks. */
function finishTime(work: Promise<void>): Promise<() => number> {
  return work.then(
    () => {
      const at = Date.now();
      return () => at;
    },
    (error: unknown) => () => {
      throw error;
    },
  );
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('segmenter service through Kafka broker outages (issue #19)', () => {
  const infra = inject('infra');
  const stream = recordedStream(SESSIONS);
  const total = stream.prompts.length + stream.toolCalls.length + stream.lifecycle.length;
  const settings = segmenterSettings();
  let outage: BrokerOutage;
  let reference: string[] = [];

  beforeAll(async () => {
    // Fails (never skips) when this run's broker cannot be taken away and brought back.
    outage = brokerOutage(infra);
    // The interrupted runs are separate processes running the compiled service.
    execFileSync('npm', ['run', '-s', 'build'], { cwd: ROOT, stdio: 'inherit' });
    reference = await uninterruptedBoundaries();
  });

  afterAll(async () => {
    // Whatever happened, later test files get a serving broker.
    await outage?.restore();
  });

  /** The outcome of an uninterrupted run: nothing lost or duplicated, each event once. */
  const uninterrupted = () => ({
    lost: [],
    duplicated: 0,
    boundaries: reference,
    inputSizes: [stream.prompts.length, stream.toolCalls.length, stream.lifecycle.length],
  });

  async function uninterruptedBoundaries(): Promise<string[]> {
    const prefix = `${uniqueName('it-outage-ref')}.`;
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
      retry: RETRY,
    });
    try {
      return await boundaryLines(topics, SESSIONS * 3);
    } finally {
      await runtime.stop();
      await platform.close();
    }
  }

  /** The compiled service on its own topics, with a connected publisher of the recording. */
  async function interruptedRun(name: string) {
    const prefix = `${uniqueName(name)}.`;
    const topics = prefixedTopics(prefix);
    const groupId = `${prefix}engram-segmenter`;
    await withTestPlatform((platform) => ensureSegmenterTopics(platform, topics, PARTITIONS));
    const publisher = await segmenterPublisher(topics);
    const service = serviceProcess('segmenter', {
      ENGRAM_KAFKA_BROKERS: infra.kafkaBrokers.join(','),
      ENGRAM_SCHEMA_REGISTRY_URL: infra.registryUrl,
      ENGRAM_TOPIC_PREFIX: prefix,
      ENGRAM_SEGMENTER_PARTITIONS: String(PARTITIONS),
      ENGRAM_SEGMENTER_SWEEP_MS: '500',
      // The reference run's mode (segmenterSettings(): keyword); the service's default is hybrid.
      ENGRAM_SEGMENTER_MODE: settings.mode,
      ENGRAM_RETRY_INITIAL_MS: String(RETRY.initialMs),
      ENGRAM_RETRY_MAX_MS: String(RETRY.maxMs),
      ENGRAM_METRICS_PORT: String(await freePort()),
    });
    const inputs = [topics.prompts, topics.toolCalls, topics.lifecycle];
    const child = service.start();
    const alive = () => service.alive(child);
    // Just after an outage the group's coordinator may still be loading: no reading yet (-1).
    const committed = () => committedOffsets(groupId, inputs).catch(() => -1);
    /** Until the group's committed input offsets pass `after`; they are returned. */
    const commitsPast = (after: number, timeoutMs = 120_000) =>
      eventually(
        async () => {
          alive();
          const sum = await committed();
          return sum > after ? sum : undefined;
        },
        { timeoutMs, intervalMs: 200 },
      );
    /** Holds the outage for `ms`: the service must stay up throughout. */
    const holdOutage = async (ms: number) => {
      for (const until = Date.now() + ms; Date.now() < until; await sleep(1_000)) alive();
      alive();
    };
    /** Once every input is committed: what was lost and duplicated against the reference. */
    const outcome = async (label: string) => {
      await commitsPast(total - 1, 180_000);
      const boundaries = await boundaryLines(topics, reference.length);
      alive();
      const lost = reference.filter((line) => !boundaries.includes(line));
      const duplicated = boundaries.length - new Set(boundaries).size;
      console.log(
        `[kafka-outage] ${label}; ${boundaries.length} boundaries vs ${reference.length} uninterrupted: ${lost.length} lost, ${duplicated} duplicated`,
      );
      // Each published event once in the input topics: the publisher's producer did not duplicate.
      const inputSizes = await Promise.all(inputs.map((topic) => topicSize(testKafka(), topic)));
      return { lost, duplicated, boundaries, inputSizes };
    };
    const close = async () => {
      await service.stop(child, 'SIGTERM');
      await publisher.disconnect();
    };
    return { publisher, commitsPast, holdOutage, outcome, close };
  }

  it("should wait out a hung broker while a part is published, ending with the uninterrupted run's boundaries", async () => {
    const run = await interruptedRun('it-outage-hang');
    const [first, second, third] = parts(stream);
    try {
      await run.publisher.publish(first);
      // Mid-stream: the service has committed its first transactions, two parts are to come.
      const beforeHang = await run.commitsPast(0, 90_000);
      console.log(`[kafka-outage] hanging ${outage.description} for ${HANG_MS} ms`);
      const hungAt = Date.now();
      await outage.hang();
      const secondPublished = finishTime(run.publisher.publish(second));
      try {
        await run.holdOutage(HANG_MS);
      } finally {
        await outage.restore();
      }
      const backAt = Date.now();
      const secondDone = (await secondPublished)();
      const afterHang = await run.commitsPast(beforeHang);
      const resumedMs = Date.now() - backAt;
      await run.publisher.publish(third);
      const result = await run.outcome(
        `hung ${backAt - hungAt} ms at input offsets ${beforeHang}/${total}; the part published meanwhile was written ${secondDone - hungAt} ms after the hang began; commits resumed after ${resumedMs} ms (offsets ${afterHang})`,
      );
      expect(result).toEqual(uninterrupted());
    } finally {
      await run.close();
    }
  }, 420_000);

  it("should wait out a stopped and restarted broker, ending with the uninterrupted run's boundaries", async () => {
    const run = await interruptedRun('it-outage-stop');
    const [first, second, third] = parts(stream);
    try {
      await run.publisher.publish(first);
      await run.publisher.publish(second);
      const beforeStop = await run.commitsPast(0, 90_000);
      console.log(`[kafka-outage] stopping ${outage.description} for ${STOP_MS} ms`);
      const stoppedAt = Date.now();
      await outage.stop();
      try {
        await run.holdOutage(STOP_MS);
      } finally {
        await outage.restore();
      }
      const backAt = Date.now();
      // A publisher's producer gives up on a broker that refused it for longer than its client
      // retries (the hook spools instead): the last part goes out once the broker is back.
      await run.publisher.publish(third);
      const afterStop = await run.commitsPast(beforeStop);
      const result = await run.outcome(
        `stopped ${backAt - stoppedAt} ms (shutdown, ${STOP_MS} ms down, restart) at input offsets ${beforeStop}/${total}; commits resumed after ${Date.now() - backAt} ms (offsets ${afterStop})`,
      );
      expect(result).toEqual(uninterrupted());
    } finally {
      await run.close();
    }
  }, 600_000);

  it('should go on with a new producer after a transaction timed out (as one left open through an outage does)', async () => {
    // The coordinator rolls back a transaction older than its timeout and bumps the producer's
    // epoch; kafkajs' producer then refuses every later transaction ("Transaction state
    // exception"). A 1 s timeout stands in for the 60 s an outage outlives.
    const kafka = testKafka();
    const topic = uniqueName('it.fenced');
    await ensureTopics(kafka, [{ topic, partitions: 1 }]);
    const producer = new RecoverableTransactionalProducer(kafka, uniqueName('txn'), 1_000);
    await producer.connect();
    const attempt = async (value: string) => {
      const transaction = await producer.transaction();
      try {
        await transaction.send({ topic, messages: [{ key: 'k', value }] });
        if (value === 'timed out') await sleep(15_000); // past the timeout and the broker's check
        await transaction.commit();
        return 'committed';
      } catch (error) {
        producer.failed(error);
        await transaction.abort().catch((abortError: unknown) => producer.failed(abortError));
        return 'failed';
      }
    };
    try {
      const outcomes = [await attempt('timed out'), await attempt('after')];
      const values = (await readAllCommitted(kafka, topic, 1)).map((m) => String(m.value));
      expect({ outcomes, values }).toEqual({
        outcomes: ['failed', 'committed'],
        values: ['after'],
      });
    } finally {
      await producer.disconnect();
    }
  });
});
