import { SqliteEventLog } from '@engram/embedded';
import { spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fallbackSpoolDirs } from '../../apps/engram/src/hook-spool';

// `engram hook` as Claude Code runs it (issue 19, findings 3 and 5): the compiled `bin/engram
// hook`, one fresh process per hook event, the payload on stdin. No server is needed: the hook
// writes the embedded log in its data dir (and the spool beside it).
//
// Parallel tool calls: Claude Code starts the PostToolUse hooks of parallel tool calls together.
// Before, the session counter's lock was waited for 150 ms and then the counters were "updated
// without the lock": two calls got the same stepIndex and eventId and downstream dropped one of
// them as a duplicate (9 of 20 lost).
//
// An unusable data dir (a file here): before, the hook said "could not spool" and exited 0, the
// events lost; now they go to the fallback spool and are published once the data dir works.

const ROOT = join(__dirname, '..', '..');
const ENGRAM = join(ROOT, 'bin', 'engram');
const SESSION = 'sess-parallel-1';
const TOOL_CALLS = 'agent.tool-calls.v1';

let work: string;
let home: string;

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'engram-hook-e2e-'));
  home = join(work, 'home');
  mkdirSync(home);
});

afterAll(() => rmSync(work, { recursive: true, force: true }));

interface Ran {
  code: number | null;
  stderr: string;
}

/** One `engram hook` process, the payload on stdin; HOME points at the test's own home. */
function hook(args: readonly string[], payload: object | null): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [ENGRAM, 'hook', '--no-context', ...args], {
      cwd: work,
      env: { ...process.env, HOME: home, XDG_STATE_HOME: '' },
      stdio: ['pipe', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
    child.stdin.end(payload === null ? '' : JSON.stringify(payload));
  });
}

/** A PostToolUse payload as Claude Code writes it; odd calls carry no tool_use_id. */
function postToolUse(i: number): object {
  return {
    session_id: SESSION,
    transcript_path: '/tmp/t.jsonl',
    cwd: work,
    hook_event_name: 'PostToolUse',
    tool_name: 'Bash',
    ...(i % 2 === 0 && { tool_use_id: `toolu_${i}` }),
    tool_input: { command: `echo call-${i}` },
    tool_response: { stdout: `call-${i}`, stderr: '', interrupted: false },
  };
}

/** Every ToolCallObserved in the data dir's log. */
function loggedToolCalls(
  dataDir: string,
): { eventId: string; stepIndex: number; command: string }[] {
  const log = SqliteEventLog.open({ dataDir });
  try {
    const info = log.topic(TOOL_CALLS);
    if (!info) return [];
    const calls = [];
    for (let partition = 0; partition < info.partitions; partition++) {
      for (const record of log.read(TOOL_CALLS, partition, 0, 100_000)) {
        calls.push(
          JSON.parse(String(record.value)) as {
            eventId: string;
            stepIndex: number;
            command: string;
          },
        );
      }
    }
    return calls;
  } finally {
    log.close();
  }
}

describe('engram hook, many processes of one session', () => {
  it('should keep all 50 parallel tool calls: distinct eventIds and stepIndexes, none dropped', async () => {
    const dataDir = join(work, 'parallel');
    const runs = await Promise.all(
      Array.from({ length: 50 }, (_, i) => hook(['--data-dir', dataDir], postToolUse(i))),
    );
    expect(runs.map((run) => run.code)).toEqual(runs.map(() => 0));
    expect(runs.filter((run) => run.stderr.includes('without the lock'))).toEqual([]);
    // Hooks that ran out of their 300 ms budget spooled; publish what they left.
    const flushed = await hook(['--data-dir', dataDir, '--flush'], null);
    expect(flushed.code).toBe(0);

    const calls = loggedToolCalls(dataDir);
    const commands = new Set(calls.map((call) => call.command));
    expect(commands.size).toBe(50);
    // The consumers drop a repeated eventId as a duplicate: every call needs its own.
    expect(new Set(calls.map((call) => call.eventId)).size).toBe(50);
    expect(calls.map((call) => call.stepIndex).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 50 }, (_, i) => i + 1),
    );
  });
});

describe('engram hook, unusable data dir', () => {
  it('should spool to the fallback, say so on stderr, exit 0, and drain once the data dir works', async () => {
    const dataDir = join(work, 'data-is-a-file');
    writeFileSync(dataDir, 'not a directory');
    const session = (i: number) => ({ ...postToolUse(i), session_id: 'sess-fallback' });
    const runs = [];
    // One after another: each sees the one before in the fallback spool.
    for (let i = 0; i < 10; i++) runs.push(await hook(['--data-dir', dataDir], session(i)));
    expect(runs.map((run) => run.code)).toEqual(runs.map(() => 0));
    const fallback = fallbackSpoolDirs(dataDir)[0].replace(
      /^.*\/\.local\/state\//,
      `${home}/.local/state/`,
    );
    for (const run of runs) expect(run.stderr).toContain(`spooled in ${fallback} instead`);
    const pending = readFileSync(join(fallback, 'pending.jsonl'), 'utf8').trim().split('\n');
    expect(pending).toHaveLength(10);

    // The data dir is repaired: the next hook publishes the fallback's events, then its own.
    unlinkSync(dataDir);
    mkdirSync(dataDir);
    const next = await hook(['--data-dir', dataDir, '--budget-ms', '10000'], session(10));
    expect(next.code).toBe(0);
    const calls = loggedToolCalls(dataDir);
    expect(new Set(calls.map((call) => call.command)).size).toBe(11);
    expect(new Set(calls.map((call) => call.eventId)).size).toBe(11);
    expect(calls.map((call) => call.stepIndex).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 11 }, (_, i) => i + 1),
    );
    expect(existsSync(join(fallback, 'pending.jsonl'))).toBe(false);
  });
});
