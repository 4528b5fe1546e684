import { parseConfig } from '@engram/config';
import type { Typed } from '@engram/contracts';
import type { SqliteEventLog } from '@engram/embedded';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { LEXICAL_ONLY_EMBEDDER } from '@engram/app-retrieval';
import { startEmbeddedServices } from '../embedded-services';
import { ImportLedger } from '../import-ledger';
import { settleEmbedded } from '../testing/embedded-settle';
import {
  runImport,
  transcriptFiles,
  type ImportProgress,
  type ImportSummary,
} from './import.command';
import { embeddedTarget } from './replay-targets';

// The hand-written transcripts (format: libs/core/src/hooks/claude-transcript.ts): a working
// session (tasks, a failing test fixed, a correction, tool errors, a compaction) and a short one
// the next day whose file has a line without a timestamp and a line cut off mid-write.
const TRANSCRIPTS = join(
  __dirname,
  '..',
  '..',
  '..',
  '..',
  'test',
  'fixtures',
  'claude-transcripts',
);
const config = parseConfig({});
const agentTopics = ['agent.prompts.v1', 'agent.tool-calls.v1', 'agent.lifecycle.v1'];

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));
function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'engram-import-'));
  dirs.push(dir);
  return dir;
}

/** A progress recorder: per phase, the totals set, the units advanced and whether it stopped. */
function recordedProgress() {
  type Bar = { total: number; done: number; stopped: boolean };
  const phases: Record<string, Bar> = {};
  const progress: ImportProgress = (phase) => {
    const bar: Bar = { total: 0, done: 0, stopped: false };
    phases[phase] = bar;
    return {
      total: (n) => (bar.total = n),
      advance: (n = 1) => (bar.done += n),
      stop: () => (bar.stopped = true),
    };
  };
  return { phases, progress };
}

async function importInto(
  dir: string,
  wait = false,
  recordedByHook?: (id: string) => boolean,
  progress?: ImportProgress,
) {
  const errors = new PassThrough();
  let reported = '';
  errors.on('data', (chunk: Buffer) => (reported += chunk.toString()));
  const target = await embeddedTarget(config, dir);
  const ledger = ImportLedger.open(dir);
  try {
    const summary = await runImport({
      config,
      path: TRANSCRIPTS,
      target,
      identity: { tenant: 'acme' },
      errors,
      ledger,
      ...(recordedByHook && { recordedByHook }),
      ...(progress && { progress }),
      ...(wait && { wait: { timeoutMs: 60_000 } }),
    });
    return { summary, reported };
  } finally {
    ledger.close();
    await target.close();
  }
}

function agentEvents(log: SqliteEventLog): Typed[] {
  return agentTopics.flatMap((topic) =>
    [...log.replay(topic)].map((record) => JSON.parse(String(record.value)) as Typed),
  );
}

describe('engram import --claude-transcripts', () => {
  it('should find the transcripts in a directory tree, sorted', () => {
    expect(transcriptFiles(TRANSCRIPTS).map((file) => file.slice(TRANSCRIPTS.length))).toEqual([
      '/-home-dev-webshop/4f1c2a9e-7b3d-4e61-9a2f-0c8d5e6b7a10.jsonl',
      '/-home-dev-webshop/9d2e7c41-1a5b-4c8e-b3f6-2e7a8c9d0b12.jsonl',
    ]);
  });

  it('should publish the sessions and dead-letter the bad lines with file:line', async () => {
    const dir = dataDir();
    const { summary, reported } = await importInto(dir);
    expect(summary).toMatchObject<Partial<ImportSummary>>({
      files: 2,
      sessions: 2,
      rejected: 2,
      unpaired: 1,
      duplicates: 0,
      caughtUp: null,
    });
    expect(reported).toMatch(
      /9d2e7c41-1a5b-4c8e-b3f6-2e7a8c9d0b12\.jsonl:4: "timestamp" is missing/,
    );
    expect(reported).toMatch(/9d2e7c41-1a5b-4c8e-b3f6-2e7a8c9d0b12\.jsonl:12: not valid JSON/);
    const { SqliteEventLog } = await import('@engram/embedded');
    const log = SqliteEventLog.open({ dataDir: dir });
    try {
      const events = agentEvents(log);
      expect(events).toHaveLength(summary.published);
      expect(events.filter((e) => e.type === 'PromptSubmitted')).toHaveLength(8);
      expect(events.filter((e) => e.type === 'SessionEnded')).toHaveLength(2);
      expect(events.every((e) => e.tenantId === 'acme' && e.projectId === 'webshop')).toBe(true);
      const dlq = [...log.replay('engram.replay.dlq')];
      expect(dlq).toHaveLength(2);
      expect(dlq[0].headers['engram.error.class']).toBe('TranscriptLineError');
      expect(dlq[0].headers['engram.error.message']).toMatch(/\.jsonl:4: /);
    } finally {
      log.close();
    }
  });

  it('should skip the sessions engram hook recorded live', async () => {
    const { summary } = await importInto(dataDir(), false, (id) => id.startsWith('4f1c2a9e'));
    expect(summary).toMatchObject({ sessions: 2, hookSessions: 1, published: 8 });
  });

  it('should publish nothing on a second import, and the services stay as they were', async () => {
    const dir = dataDir();
    const services = await startEmbeddedServices({
      config,
      dataDir: dir,
      sweepIntervalMs: 100,
      llm: null,
      retrievalEmbedder: LEXICAL_ONLY_EMBEDDER,
    });
    const { log } = services;
    try {
      const bars = recordedProgress();
      const first = await importInto(dir, true, undefined, bars.progress);
      expect(first.summary).toMatchObject({ caughtUp: true, alreadyImported: 0 });
      // A bar per phase, each run to its end and stopped.
      const { reading, publishing, processing } = bars.phases;
      expect(reading).toEqual({ total: 2, done: 2, stopped: true });
      expect(publishing).toEqual({
        total: first.summary.published,
        done: first.summary.published,
        stopped: true,
      });
      expect(processing.stopped).toBe(true);
      expect(processing.done).toBe(processing.total);
      expect(processing.total).toBeGreaterThanOrEqual(first.summary.published);
      const before = await settled(log, dir);
      const eventsBefore = agentEvents(log);
      expect(eventsBefore).toHaveLength(first.summary.published);
      // The services learned from it: the correction, among others.
      expect(before.memories.length).toBeGreaterThan(0);
      expect(before.episodes.length).toBeGreaterThan(0);
      expect(before.memories.join('\n')).toContain('vitest fake timers');

      const again = await importInto(dir, true);
      expect(again.summary).toMatchObject({
        published: 0,
        alreadyImported: first.summary.published,
        rejected: 2, // the same two bad lines are reported (and dead-lettered) again
        caughtUp: true,
      });
      expect(agentEvents(log)).toEqual(eventsBefore);
      expect(await settled(log, dir)).toEqual(before);
    } finally {
      await services.stop();
    }
  }, 120_000);
});

/** What the services made of the log once idle: memories, episodes, every output's end. */
async function settled(log: SqliteEventLog, dir: string) {
  await settleEmbedded(log, dir, config);
  return {
    outputs: Object.fromEntries(
      log
        .topics()
        .map((topic) => topic.name)
        .filter((name) => !agentTopics.includes(name) && !name.startsWith('engram.replay'))
        .sort()
        .map((name) => [name, log.endOffsets(name)]),
    ),
    memories: latest(log, 'memory.memories.v1'),
    episodes: latest(log, 'memory.episodes.v1'),
  };
}

function latest(log: SqliteEventLog, topic: string): string[] {
  const values = new Map<string, string>();
  for (const record of log.replay(topic)) values.set(String(record.key), String(record.value));
  return [...values.values()].sort();
}
