// Measures the embedded SQLite event log (libs/embedded): durable single appends (one fsynced
// transaction each), batched appends, raw and typed reads, the exactly-once processor end to end,
// and a changelog restore. Prints one JSON object. Short on purpose (about 20 s on 2 cores).
// Run with `bash test/bench/event-log-bench.sh [--dir DIR]` (default: a fresh dir under the OS tmp).
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  envelopeProblems,
  eventKey,
  fromAvroValue,
  loadAvroSchema,
  SCHEMA_VERSION,
  toAvroValue,
  topicSpec,
  type Typed,
} from '@engram/contracts';
import type { TopicCodec } from '@engram/core';
import {
  decodeEvent,
  EmbeddedExactlyOnceProcessor,
  encodeEvent,
  SqliteEventLog,
} from '@engram/embedded';
import { EVENT_FIXTURES } from '../../libs/contracts/src/testing/event-fixtures';

type Prompt = Typed<'PromptSubmitted'>;

const SINGLE_APPENDS = 2_000;
const BATCHED_RECORDS = 100_000;
const BATCH = 100;
const PROCESSED = 20_000;
const CHANGELOG_KEYS = 10_000;

function flag(name: string): string | undefined {
  const at = process.argv.indexOf(name);
  return at === -1 ? undefined : process.argv[at + 1];
}

// contractCodec('agent.prompts.v1') of libs/kafka, rebuilt here so the benchmark loads no kafkajs.
const prompts: TopicCodec<Prompt> = {
  topic: 'agent.prompts.v1',
  subject: 'agent.prompts.v1-value',
  schema: loadAvroSchema(topicSpec('agent.prompts.v1')!.avroFile) as object,
  toAvro: (event) => toAvroValue(event),
  fromAvro: (value) => fromAvroValue('agent.prompts.v1', value),
  key: (event) => eventKey(event),
  validate: (event) => envelopeProblems(event),
};

function prompt(n: number): Prompt {
  return {
    type: 'PromptSubmitted',
    ...(EVENT_FIXTURES.PromptSubmitted as Omit<Prompt, 'type'>),
    eventId: `00000000-0000-4000-8000-${n.toString().padStart(12, '0')}`,
    sessionId: `session-${n % 64}`,
    promptId: n,
    schemaVersion: SCHEMA_VERSION,
    text: `fix the token refresh race in src/auth/refresh.ts, attempt ${n}, when logout happens during refresh`,
  };
}

const perSecond = (count: number, ms: number) => Math.round((count * 1000) / ms);
const percentile = (sorted: number[], p: number) =>
  Math.round(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] * 1000) / 1000;

async function main(): Promise<void> {
  const base = flag('--dir') ?? tmpdir();
  const dir = mkdtempSync(join(base, 'engram-log-bench-'));
  const log = SqliteEventLog.open({ dataDir: dir });
  try {
    log.ensureTopic(prompts.topic, 3);
    log.ensureTopic('out', 3);
    log.ensureTopic('changelog', 3, { compacted: true });
    const records = Array.from({ length: BATCHED_RECORDS }, (_, n) =>
      encodeEvent(prompts, prompt(n)),
    );
    const valueBytes = Buffer.byteLength(records[0].value);

    // 1. Single appends: one record, one fsynced transaction each.
    const latencies: number[] = [];
    let start = performance.now();
    for (let n = 0; n < SINGLE_APPENDS; n++) {
      const t = performance.now();
      log.append(prompts.topic, [records[n]]);
      latencies.push(performance.now() - t);
    }
    const singleMs = performance.now() - start;
    latencies.sort((a, b) => a - b);

    // 2. Batched appends: BATCH records per transaction.
    start = performance.now();
    for (let n = SINGLE_APPENDS; n < BATCHED_RECORDS; n += BATCH) {
      log.append(prompts.topic, records.slice(n, n + BATCH));
    }
    const batchedMs = performance.now() - start;
    const batchedCount = BATCHED_RECORDS - SINGLE_APPENDS;

    // 3. Reads: raw pages of 500, then the same records decoded and schema-checked.
    start = performance.now();
    let read = 0;
    const pages: ReturnType<SqliteEventLog['read']>[] = [];
    for (let p = 0; p < 3; p++) {
      for (let offset = 0; ;) {
        const page = log.read(prompts.topic, p, offset, 500);
        if (page.length === 0) break;
        read += page.length;
        offset = page[page.length - 1].offset + 1;
        if (pages.length < 40) pages.push(page);
      }
    }
    const readMs = performance.now() - start;
    start = performance.now();
    let decoded = 0;
    for (const page of pages) {
      for (const record of page) decoded += decodeEvent(prompts, record) ? 1 : 0;
    }
    const decodeMs = performance.now() - start;

    // 4. The exactly-once processor: decode, identity stage, encode, one transaction per batch.
    const processor = new EmbeddedExactlyOnceProcessor(log, {
      groupId: 'bench',
      service: 'bench',
      retry: { initialMs: 10, maxMs: 100 },
    }).subscribe(prompts, {
      transform: (items) => [
        { codec: { ...prompts, topic: 'out' }, events: items.map((item) => item.event) },
      ],
    });
    const target = PROCESSED;
    start = performance.now();
    await processor.start();
    while (processor.counters.processed < target) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const processMs = performance.now() - start;
    const processed = processor.counters.processed;
    const transactions = processor.counters.transactions;
    await processor.stop();

    // 5. A changelog of CHANGELOG_KEYS sessions, each written 3 times, restored.
    for (let round = 0; round < 3; round++) {
      for (let n = 0; n < CHANGELOG_KEYS; n += 500) {
        log.append(
          'changelog',
          Array.from({ length: 500 }, (_, i) => ({
            key: `session-${n + i}`,
            value: Buffer.from(JSON.stringify({ round, state: 'x'.repeat(400) })),
          })),
        );
      }
    }
    start = performance.now();
    const restored = log.latestByKey('changelog', [0, 1, 2]).size;
    const restoreMs = performance.now() - start;

    console.log(
      JSON.stringify({
        cores: availableParallelism(),
        valueBytes,
        singleAppendsPerSecond: perSecond(SINGLE_APPENDS, singleMs),
        singleAppendLatencyMs: {
          p50: percentile(latencies, 0.5),
          p99: percentile(latencies, 0.99),
        },
        batchedAppendRecordsPerSecond: perSecond(batchedCount, batchedMs),
        batchSize: BATCH,
        rawReadRecordsPerSecond: perSecond(read, readMs),
        typedDecodeEventsPerSecond: perSecond(decoded, decodeMs),
        processorEventsPerSecond: perSecond(processed, processMs),
        processorTransactions: transactions,
        changelogRestore: { keys: restored, ms: Math.round(restoreMs) },
      }),
    );
  } finally {
    log.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

void main();
