import { parseConfig } from '@engram/config';
import type { Typed } from '@engram/contracts';
import { SqliteEventLog } from '@engram/embedded';
import {
  appendFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { ImportLedger } from '../import-ledger';
import {
  CODEX_FOLLOW_STATE_FILE,
  CodexFollower,
  followCodexSessions,
  runCodexImport,
  type CodexFollowRun,
  type CodexImportSummary,
} from './codex-import';
import { embeddedTarget } from './replay-targets';

// The rollouts of test/fixtures/codex-sessions (format: libs/core/src/hooks/codex-session.ts):
// a working session of 40 lines and a short `codex exec` one the next day.
const FIXTURES = join(__dirname, '..', '..', '..', '..', 'test', 'fixtures', 'codex-sessions');
const WORK_SESSION = 'a3c9e2f0-5b7d-4c1e-8f2a-9d6b3e1c7a45';
const WORK_FILE = `2026/11/20/rollout-2026-11-20T09-00-00-${WORK_SESSION}.jsonl`;
const config = parseConfig({});
const agentTopics = ['agent.prompts.v1', 'agent.tool-calls.v1', 'agent.lifecycle.v1'];

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'engram-codex-import-'));
  dirs.push(dir);
  return dir;
}

async function importInto(dataDir: string, path: string) {
  const errors = new PassThrough();
  let reported = '';
  errors.on('data', (chunk: Buffer) => (reported += chunk.toString()));
  const target = await embeddedTarget(config, dataDir);
  const ledger = ImportLedger.open(dataDir);
  try {
    const summary = await runCodexImport({
      config,
      path,
      target,
      identity: { tenant: 'acme' },
      errors,
      ledger,
    });
    return { summary, reported };
  } finally {
    ledger.close();
    await target.close();
  }
}

/** The agent events in a data directory's log, by id (the order of topics is the log's). */
function agentEvents(dataDir: string): Typed[] {
  const log = SqliteEventLog.open({ dataDir });
  try {
    return agentTopics
      .flatMap((topic) =>
        [...log.replay(topic)].map((record) => JSON.parse(String(record.value)) as Typed),
      )
      .sort((a, b) => a.eventId.localeCompare(b.eventId));
  } finally {
    log.close();
  }
}

function deadLetters(dataDir: string) {
  const log = SqliteEventLog.open({ dataDir });
  try {
    return [...log.replay('engram.replay.dlq')];
  } finally {
    log.close();
  }
}

describe('engram import --codex-sessions', () => {
  it('should publish the sessions, and nothing on a second import', async () => {
    const dir = tempDir();
    const { summary, reported } = await importInto(dir, FIXTURES);
    expect(summary).toMatchObject<Partial<CodexImportSummary>>({
      files: 2,
      sessions: 2,
      rejected: 0,
      unknown: 2,
      unpaired: 1,
      alreadyImported: 0,
      caughtUp: null,
    });
    expect(reported).toBe('');
    const events = agentEvents(dir);
    expect(events).toHaveLength(summary.published);
    expect(events.filter((e) => e.type === 'PromptSubmitted')).toHaveLength(4);
    expect(events.filter((e) => e.type === 'SessionStarted')).toMatchObject([
      { agentKind: 'codex', agentId: 'codex' },
      { agentKind: 'codex', agentId: 'codex' },
    ]);
    expect(events.filter((e) => e.type === 'SessionEnded')).toHaveLength(2);
    expect(events.every((e) => e.tenantId === 'acme' && e.projectId === 'webshop')).toBe(true);

    const again = await importInto(dir, FIXTURES);
    expect(again.summary).toMatchObject({ published: 0, alreadyImported: summary.published });
    expect(agentEvents(dir)).toEqual(events);
  });

  it('should dead-letter bad lines with file:line and import the rest', async () => {
    const sessions = tempDir();
    const file = join(
      sessions,
      'rollout-2026-11-22T08-00-00-0b9d7c3e-2f14-4a8b-9e6d-5c1a7f3b8e20.jsonl',
    );
    writeFileSync(
      file,
      [
        '{"timestamp":"2026-11-22T08:00:00.000Z","type":"session_meta","payload":{"id":"s-1","cwd":"/home/dev/webshop"}}',
        '{"timestamp":"2026-11-22T08:00:01.000Z","type":"event_msg","payload":{"type":"user_message","message":"hi"}}',
        '{"timestamp":"2026-11-22T08:00:02.000Z","type":"response_item","payl',
        '',
      ].join('\n'),
    );
    const dir = tempDir();
    const { summary, reported } = await importInto(dir, sessions);
    expect(summary).toMatchObject({ files: 1, sessions: 1, rejected: 1, published: 3 });
    expect(reported).toMatch(/0b9d7c3e-2f14-4a8b-9e6d-5c1a7f3b8e20\.jsonl:3: not valid JSON/);
    const [dead] = deadLetters(dir);
    expect(dead.headers['engram.error.class']).toBe('TranscriptLineError');
  });
});

describe('engram import --codex-sessions --follow', () => {
  const lines = readFileSync(join(FIXTURES, WORK_FILE), 'utf8').split('\n').slice(0, -1);

  /** A follower of `sessions` publishing into `dataDir`, closed after `use`. */
  async function following<T>(
    sessions: string,
    dataDir: string,
    clock: { now: number },
    use: (follower: CodexFollower, run: CodexFollowRun) => Promise<T>,
  ): Promise<T> {
    const target = await embeddedTarget(config, dataDir);
    const ledger = ImportLedger.open(dataDir);
    const run: CodexFollowRun = {
      config,
      path: sessions,
      target,
      identity: { tenant: 'acme' },
      errors: new PassThrough(),
      ledger,
      statePath: join(dataDir, CODEX_FOLLOW_STATE_FILE),
      idleEndMs: 60_000,
      now: () => clock.now,
    };
    try {
      return await use(new CodexFollower(run), run);
    } finally {
      ledger.close();
      await target.close();
    }
  }

  it('should publish lines as they come, once, across restarts, as a one-off import would', async () => {
    const sessions = tempDir();
    const dataDir = tempDir();
    const file = join(sessions, WORK_FILE);
    mkdirSync(join(file, '..'), { recursive: true });
    const clock = { now: Date.now() };
    // The first 12 lines and half of the 13th: the half line waits.
    writeFileSync(file, `${lines.slice(0, 12).join('\n')}\n${lines[12].slice(0, 40)}`);
    const first = await following(sessions, dataDir, clock, async (follower) => {
      const polls = [await follower.poll()];
      appendFileSync(file, `${lines[12].slice(40)}\n${lines.slice(13, 20).join('\n')}\n`);
      polls.push(await follower.poll(), await follower.poll());
      return polls;
    });
    // Lines 1–12: SessionStarted, the first prompt, the failing npm test (its output is line
    // 11) — and not the sed call, whose output is on line 14.
    expect(first.map((poll) => [poll.grown, poll.published, poll.ended])).toEqual([
      [1, 3, 0],
      [1, 3, 0], // the sed call, the patch, the passing test
      [0, 0, 0],
    ]);
    expect(agentEvents(dataDir)).toHaveLength(6);

    // A restart: nothing read again, nothing published again; then the rest of the file.
    const second = await following(sessions, dataDir, clock, async (follower) => {
      const polls = [await follower.poll()];
      appendFileSync(file, `${lines.slice(20).join('\n')}\n`);
      polls.push(await follower.poll());
      clock.now += 120_000; // quiet for two minutes: the session ends
      polls.push(await follower.poll(), await follower.poll());
      return polls;
    });
    expect(
      second.map((poll) => [poll.grown, poll.published, poll.alreadyImported, poll.ended]),
    ).toEqual([
      [0, 0, 0, 0],
      [1, 6, 0, 0],
      [0, 1, 0, 1],
      [0, 0, 0, 0],
    ]);
    const followed = agentEvents(dataDir);
    expect(new Set(followed.map((event) => event.eventId)).size).toBe(followed.length);
    expect(JSON.parse(readFileSync(join(dataDir, CODEX_FOLLOW_STATE_FILE), 'utf8'))).toEqual({
      version: 1,
      files: { [file]: { offset: Buffer.byteLength(`${lines.join('\n')}\n`), ended: true } },
    });

    // The same events, ids and all, as importing the finished file in one go.
    const oneOff = tempDir();
    await importInto(oneOff, sessions);
    expect(followed).toEqual(agentEvents(oneOff));

    // Restarted once more, with the session over: nothing to do.
    const third = await following(sessions, dataDir, clock, (follower) => follower.poll());
    expect(third).toMatchObject({ grown: 0, published: 0, ended: 0 });
  });

  it('should follow new files until stopped', async () => {
    const sessions = tempDir();
    const dataDir = tempDir();
    const clock = { now: Date.now() };
    const stop = new AbortController();
    const published: number[] = [];
    await following(sessions, dataDir, clock, async (_, run) => {
      const done = followCodexSessions(run, {
        signal: stop.signal,
        pollMs: 10,
        onPoll: (poll) => {
          if (poll.published > 0) published.push(poll.published);
          if (published.length === 1) stop.abort();
        },
      });
      // The directory appears after the follower started.
      cpSync(FIXTURES, sessions, { recursive: true });
      const totals = await done;
      expect(totals).toMatchObject({ published: published[0], rejected: 0 });
    });
    expect(published).toHaveLength(1);
    expect(existsSync(join(dataDir, CODEX_FOLLOW_STATE_FILE))).toBe(true);
    // Both sessions so far, without their ends (the files are fresh).
    const events = agentEvents(dataDir);
    expect(events.filter((e) => e.type === 'SessionStarted')).toHaveLength(2);
    expect(events.filter((e) => e.type === 'SessionEnded')).toHaveLength(0);
  });
});
