// Issue #19, finding 6 ("crash tests are thin"): the whole embedded `engram start` process —
// segmenter, observer, distiller, reflector and retrieval indexer together — SIGKILLed 5 times
// while it works through a replay, each kill after a commit the test saw land, then restarted:
// every output (episode boundaries, episodes, memories, thread links, proposals, the retrieval
// documents and the observer graph) must equal an uninterrupted run's: 0 lost, 0 duplicated.
import { parseConfig } from '@engram/config';
import { SqliteEventLog, type TopicInfo } from '@engram/embedded';
import Database from 'better-sqlite3';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { tsNodeArgs } from '../../../libs/embedded/src/testing/ts-child';
import { recordedStream } from '../../../test/integration/support/recorded-sessions';
import { runReplay, serviceGroups } from './commands/replay.command';
import { embeddedTarget } from './commands/replay-targets';
import { startEmbeddedServices } from './embedded-services';
import { settleEmbedded } from './testing/embedded-settle';
import { CRASH_TEST_SERVICE_OPTIONS } from './testing/embedded-services-child';

const KILLS = 5;
const config = parseConfig({});

/** The recorded sessions as replay lines, in KILLS + 1 chunks (one published before each kill). */
function replayChunks(): string[] {
  const stream = recordedStream(6);
  const lines = [...stream.prompts, ...stream.toolCalls, ...stream.lifecycle]
    .sort((a, b) => a.timestamp - b.timestamp)
    .map((event) => JSON.stringify(event));
  const size = Math.ceil(lines.length / (KILLS + 1));
  return Array.from({ length: KILLS + 1 }, (_, i) =>
    lines.slice(i * size, (i + 1) * size).join('\n'),
  );
}

async function publish(dataDir: string, content: string): Promise<void> {
  const target = await embeddedTarget(config, dataDir);
  try {
    const summary = await runReplay({ config, content, target, errors: new PassThrough() });
    expect(summary.rejected).toBe(0);
  } finally {
    await target.close();
  }
}

/**
 * What a run produced, per derived topic: the latest record of every key and session (a compacted
 * topic's state: a memory's later version is allowed to arrive by another interleaving of the
 * inputs, its final version is not) or every record (an event topic: a multiset, so a duplicate shows); the
 * records that occur twice; the retrieval documents and the observer graph.
 */
function outputs(dataDir: string) {
  const log = SqliteEventLog.open({ dataDir });
  try {
    const topics = log
      .topics()
      .filter((topic) => topic.name.startsWith('memory.') && !topic.name.endsWith('.dlq'));
    const records: Record<string, string[]> = {};
    const duplicates: string[] = [];
    for (const topic of topics) {
      const all = [...log.replay(topic.name)].map((r) => `${String(r.key)} ${String(r.value)}`);
      duplicates.push(...all.filter((record, i) => all.indexOf(record) !== i));
      records[topic.name] = topic.compacted ? latestByKey(log, topic) : all.sort();
    }
    return {
      records,
      duplicates,
      retrieval: tableRows(dataDir, 'retrieval.db'),
      graph: graphRows(dataDir),
    };
  } finally {
    log.close();
  }
}

/**
 * The latest record of every key. The distiller's memories too: one fact learnt in several
 * sessions is one memory id, and the distiller's merge stage joins its versions whatever order
 * they come in (memory-join.ts), so its final version does not depend on timing.
 */
function latestByKey(log: SqliteEventLog, topic: TopicInfo): string[] {
  const latest = new Map<string, string>();
  for (const record of log.replay(topic.name)) {
    const value = record.value === null ? null : String(record.value);
    latest.set(String(record.key), `${String(record.key)} ${value}`);
  }
  return [...latest.values()].sort();
}

function tableRows(dataDir: string, file: string): string[] {
  const db = new Database(join(dataDir, file), { readonly: true });
  try {
    return db
      .prepare('SELECT tier, id, doc FROM retrieval_documents')
      .all()
      .map((row) => JSON.stringify(row))
      .sort();
  } finally {
    db.close();
  }
}

function graphRows(dataDir: string): Record<string, string[]> {
  const db = new Database(join(dataDir, 'graph.db'), { readonly: true });
  try {
    const tables = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'graph_%'")
      .pluck()
      .all() as string[];
    return Object.fromEntries(
      tables.map((table) => [
        table,
        db
          .prepare(`SELECT * FROM ${table}`)
          .all()
          .map((row) => JSON.stringify(row))
          .sort(),
      ]),
    );
  } finally {
    db.close();
  }
}

/** The sum of every consumer group's committed offsets: it grows with each commit. */
function committedTotal(dataDir: string): number {
  const log = SqliteEventLog.open({ dataDir });
  try {
    return serviceGroups(config)
      .flatMap(({ groupId, topics }) =>
        topics.flatMap((topic) =>
          log.topic(topic) ? [...log.committedOffsets(groupId, topic).values()] : [],
        ),
      )
      .reduce((sum, offset) => sum + offset, 0);
  } finally {
    log.close();
  }
}

async function until(what: string, check: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('embedded engram start under SIGKILL (issue #19)', () => {
  const root = mkdtempSync(join(tmpdir(), 'engram-crash-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  /** `engram start`'s services in a child process on `dataDir`, once they are all running. */
  async function spawnServices(dataDir: string): Promise<ChildProcess> {
    const child = spawn(
      process.execPath,
      tsNodeArgs(root, '../../../../apps/engram/src/testing/embedded-services-child.ts', [dataDir]),
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    await new Promise<void>((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`services exited (${code}): ${stderr}`)));
      child.stdout.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('ready')) resolve();
      });
    });
    child.removeAllListeners('exit');
    return child;
  }

  async function kill(child: ChildProcess): Promise<void> {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }

  it('should produce exactly what an uninterrupted run produces after 5 kills', async () => {
    const chunks = replayChunks();

    const cleanDir = join(root, 'clean');
    const clean = await startEmbeddedServices({
      config,
      dataDir: cleanDir,
      ...CRASH_TEST_SERVICE_OPTIONS,
    });
    try {
      for (const chunk of chunks) await publish(cleanDir, chunk);
      await settleEmbedded(clean.log, cleanDir, config);
    } finally {
      await clean.stop();
    }
    const expected = outputs(cleanDir);
    expect(expected.records['memory.episodes.v1']?.length).toBeGreaterThan(0);
    expect(expected.records['memory.memories.v1']?.length).toBeGreaterThan(0);
    expect(expected.retrieval.length).toBeGreaterThan(0);
    expect(expected.duplicates).toEqual([]);

    const crashDir = join(root, 'crash');
    let child = await spawnServices(crashDir);
    const killedAfter: number[] = [];
    try {
      for (const chunk of chunks.slice(0, KILLS)) {
        const before = committedTotal(crashDir);
        await publish(crashDir, chunk);
        // Killed after a commit the test saw land, a random moment into the work that follows.
        await until('a commit', () => committedTotal(crashDir) > before);
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 150));
        killedAfter.push(committedTotal(crashDir));
        await kill(child);
        child = await spawnServices(crashDir);
      }
      await publish(crashDir, chunks[KILLS]);
      const log = SqliteEventLog.open({ dataDir: crashDir });
      try {
        await settleEmbedded(log, crashDir, config);
      } finally {
        log.close();
      }
    } finally {
      await kill(child);
    }
    expect(killedAfter).toHaveLength(KILLS);
    const actual = outputs(crashDir);
    expect(Object.keys(actual.records).sort()).toEqual(Object.keys(expected.records).sort());
    expect(actual.records).toEqual(expected.records);
    expect(actual.duplicates).toEqual([]);
    expect(actual.retrieval).toEqual(expected.retrieval);
    expect(actual.graph).toEqual(expected.graph);
  }, 240_000);
});
