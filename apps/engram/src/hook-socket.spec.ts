import { parseConfig } from '@engram/config';
import type { Typed } from '@engram/contracts';
import { DEFAULT_RANKING_CONFIG } from '@engram/core';
import { SqliteEventLog, sqliteStoreWriter } from '@engram/embedded';
import { Logger } from '@nestjs/common';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createRecallStack,
  sqliteBackend,
  LEXICAL_ONLY_EMBEDDER,
  RetrievalIndexer,
  type RecallStack,
} from '@engram/app-retrieval';
import {
  AUTH_FILE,
  CURRENT_SESSION,
  indexRpcCorpus,
  PROJECT,
  rpcCorpus,
  TENANT,
} from '@engram/app-retrieval/testing';
import { tsNodeArgs } from '../../../libs/embedded/src/testing/ts-child';
import { embeddedHookPublisher } from './commands/hook.command';
import { startEmbeddedServices, type EmbeddedServices } from './embedded-services';
import {
  serveEmbeddedHookSocket,
  serveHookSocket,
  type HookSocketServer,
} from './hook-socket-server';
import { hookSocketPath } from './hook-socket-protocol';

// The hook as a thin client of `engram start` (issue #22): the real hook process (hook-entry.ts,
// spawned, as bin/engram runs it) hands its payload to the running services over
// <data-dir>/hook.sock and prints what they answer; with no service, a dead one, one that
// refuses or one that does not answer, it does the work itself as before. Either way each
// event lands in the log exactly once, with the ids the direct path gives.

const config = parseConfig({});
/** From libs/embedded/src/testing, where tsNodeArgs resolves scripts. */
const ENTRY = '../../../../apps/engram/src/hook-entry.ts';
const DIRECT = '../../../../apps/engram/src/hook-main.ts';
const AGENT_TOPICS = ['agent.prompts.v1', 'agent.tool-calls.v1', 'agent.lifecycle.v1'];

let root: string;
let repo: string;
let dataDir: string;
let services: EmbeddedServices;
let stack: RecallStack;
let hooks: HookSocketServer;

interface HookRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Node's arguments for a script, the SWC hook written once (tsNodeArgs rewrites it on each call,
 * and a child reading it half-written would run its .ts as an unknown file).
 */
const nodeArgs = new Map<string, string[]>();
function scriptArgs(script: string): string[] {
  let args = nodeArgs.get(script);
  if (args === undefined) nodeArgs.set(script, (args = tsNodeArgs(root, script, [])));
  return args;
}

/** `engram hook --data-dir <dir> <args>` as a process, `input` on stdin. */
function runHook(dir: string, input: string, args: string[] = [], script = ENTRY) {
  return new Promise<HookRun>((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [...scriptArgs(script), 'hook', '--data-dir', dir, '--tenant', TENANT, ...args],
      // The hook's settings: the same (none) as the services' parseConfig({}).
      { env: { PATH: process.env.PATH ?? '', HOME: root }, cwd: repo },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

function payload(session: string, hook: string, fields: Record<string, unknown>): string {
  return JSON.stringify({
    session_id: session,
    transcript_path: `/home/dev/.claude/projects/api/${session}.jsonl`,
    cwd: repo,
    hook_event_name: hook,
    ...fields,
  });
}
const prompt = (session: string, text = 'is it the logout mutex again?') =>
  payload(session, 'UserPromptSubmit', { prompt: text });
const toolCall = (session: string) =>
  payload(session, 'PostToolUse', {
    tool_name: 'Read',
    tool_use_id: `toolu_${session}`,
    tool_input: { file_path: join(repo, AUTH_FILE) },
    tool_response: { type: 'text', file: { filePath: join(repo, AUTH_FILE), content: 'x' } },
  });

/** The agent events in the log of `dir` (a second connection: the services hold theirs). */
function eventsIn(dir: string): Typed[] {
  if (!existsSync(join(dir, 'events.db'))) return [];
  const log = SqliteEventLog.open({ dataDir: dir });
  try {
    return AGENT_TOPICS.filter((topic) => log.topic(topic) !== undefined).flatMap((topic) =>
      [...log.replay(topic)].map((record) => JSON.parse(String(record.value)) as Typed),
    );
  } finally {
    log.close();
  }
}

function contextOf(stdout: string): string {
  const output = JSON.parse(stdout) as { hookSpecificOutput: { additionalContext: string } };
  return output.hookSpecificOutput.additionalContext;
}

const idsOf = (events: Typed[]) => events.map((event) => `${event.type} ${event.eventId}`).sort();

beforeAll(async () => {
  Logger.overrideLogger(['warn', 'error']);
  root = mkdtempSync(join(tmpdir(), 'engram-hook-socket-'));
  repo = join(root, 'api');
  mkdirSync(join(repo, '.git'), { recursive: true });
  // The file the corpus's memories are about exists in the working tree (they are injected).
  mkdirSync(join(repo, 'src', 'auth'), { recursive: true });
  writeFileSync(join(repo, AUTH_FILE), 'export {};\n');
  dataDir = join(root, 'data');
  for (const script of [ENTRY, DIRECT]) scriptArgs(script);
  // `engram start` on the data dir: its services, its recall stack, its hook socket.
  services = await startEmbeddedServices({
    config,
    dataDir,
    sweepIntervalMs: 100,
    llm: null,
    retrievalEmbedder: LEXICAL_ONLY_EMBEDDER,
  });
  const indexer = new RetrievalIndexer(
    LEXICAL_ONLY_EMBEDDER,
    sqliteStoreWriter(services.retrieval.store),
  );
  await indexRpcCorpus(indexer, rpcCorpus(Date.now()));
  stack = createRecallStack({
    ranking: DEFAULT_RANKING_CONFIG,
    backend: sqliteBackend(services.retrieval.store),
    embedder: LEXICAL_ONLY_EMBEDDER,
  });
  const served = await serveEmbeddedHookSocket({
    config,
    dataDir,
    context: stack.context,
    log: (line) => console.error(line),
  });
  if (served === null) throw new Error('the hook socket was not served');
  hooks = served;
}, 60_000);

afterAll(async () => {
  await hooks?.stop();
  await stack?.access.close();
  await services?.stop();
  rmSync(root, { recursive: true, force: true });
  Logger.overrideLogger(['log', 'warn', 'error']);
});

describe('engram hook through the socket of engram start', () => {
  it('should serve a private socket in the data dir and not take over a live one', async () => {
    expect(hooks.path).toBe(join(dataDir, 'hook.sock'));
    expect(statSync(hooks.path).isSocket()).toBe(true);
    expect(statSync(hooks.path).mode & 0o777).toBe(0o600);
    const second = await serveEmbeddedHookSocket({
      config,
      dataDir,
      context: stack.context,
      log: () => undefined,
    });
    expect(second).toBeNull();
    expect(statSync(hooks.path).isSocket()).toBe(true);
  });

  it('should publish a prompt and a tool call once, with the direct ids, and print the context', async () => {
    const session = 'socket-1';
    const before = hooks.served;
    const prompted = await runHook(dataDir, prompt(session), [
      '--project',
      PROJECT,
      '--context-budget-ms',
      '20000',
    ]);
    expect(prompted).toMatchObject({ code: 0, stderr: '' });
    const context = contextOf(prompted.stdout);
    expect(context).toMatch(/^Engram memory for this request \(recalled from past sessions/);
    expect(context).toContain('## Relevant memories');
    expect(context).toContain('[mem-inj-gotc] gotcha: Auth token refresh races with logout');
    const called = await runHook(dataDir, toolCall(session), ['--project', PROJECT]);
    expect(called).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(hooks.served - before).toBe(2);

    // The same two hooks with no service (no socket in that data dir): the direct path.
    const directDir = join(root, 'direct');
    for (const input of [prompt(session), toolCall(session)]) {
      const direct = await runHook(directDir, input, ['--project', PROJECT, '--no-context']);
      expect(direct).toEqual({ code: 0, stdout: '', stderr: '' });
    }
    expect(hooks.served - before).toBe(2);

    const viaSocket = eventsIn(dataDir).filter((event) => event.sessionId === session);
    expect(viaSocket.map((event) => event.type).sort()).toEqual([
      'PromptSubmitted',
      'ToolCallObserved',
    ]);
    expect(idsOf(viaSocket)).toEqual(idsOf(eventsIn(directDir)));
    expect(existsSync(join(dataDir, 'spool', 'pending.jsonl'))).toBe(false);
  }, 120_000);

  it('should print the file warnings of a PreToolUse from the warm recall stack', async () => {
    const editing = await runHook(
      dataDir,
      payload(CURRENT_SESSION, 'PreToolUse', {
        tool_name: 'Edit',
        tool_use_id: 'toolu_edit',
        tool_input: { file_path: join(repo, AUTH_FILE), old_string: 'a', new_string: 'b' },
      }),
      ['--project', PROJECT],
    );
    expect(editing.stderr).toBe('');
    expect(contextOf(editing.stdout)).toContain('[inj-gotc]');
  }, 60_000);

  it('should lose no event of 20 parallel hooks, socket and direct ones mixed', async () => {
    const session = 'socket-parallel';
    const before = hooks.served;
    const ran = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        runHook(
          dataDir,
          prompt(session, `parallel prompt ${i}`),
          ['--project', PROJECT, '--no-context', '--budget-ms', '20000'],
          // Every fourth hook takes the direct path while the others go through the socket: the
          // session's counters are shared under one lock either way.
          i % 4 === 3 ? DIRECT : ENTRY,
        ),
      ),
    );
    // A socket hook whose handshake the loaded machine (20 processes compiling TypeScript on 2
    // cores) delayed past its budget went direct, and said so: it is counted, not lost.
    const busy =
      'engram hook: the service did not take the event (the service is busy); publishing directly\n';
    for (const run of ran) {
      expect(run).toMatchObject({ code: 0, stdout: '' });
      expect(['', busy]).toContain(run.stderr);
    }
    const wentDirect = ran.filter((run) => run.stderr === busy).length;
    expect(hooks.served - before).toBe(15 - wentDirect);
    expect(hooks.served - before).toBeGreaterThan(0);
    const prompts = eventsIn(dataDir).filter(
      (event): event is Typed<'PromptSubmitted'> =>
        event.sessionId === session && event.type === 'PromptSubmitted',
    );
    expect(prompts).toHaveLength(20);
    expect(new Set(prompts.map((event) => event.eventId)).size).toBe(20);
    expect(new Set(prompts.map((event) => event.text)).size).toBe(20);
    expect(prompts.map((event) => event.promptId).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 20 }, (_, i) => i + 1),
    );
  }, 180_000);
});

describe('engram hook when the socket cannot take the event', () => {
  /** A data dir of its own, with `prepare` run on its socket path first. */
  async function fallbackCase(name: string, prepare: (socket: string) => Promise<void>) {
    const dir = join(root, name);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    await prepare(hookSocketPath(dir));
    const ran = await runHook(dir, prompt(`${name}-session`), ['--no-context']);
    return { dir, ran, events: eventsIn(dir) };
  }

  it('should publish directly when no socket is there', async () => {
    const { ran, events } = await fallbackCase('absent', () => Promise.resolve());
    expect(ran).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(events.map((event) => event.type)).toEqual(['PromptSubmitted']);
  }, 60_000);

  it('should publish directly past a stale socket, which the next engram start replaces', async () => {
    const { dir, ran, events } = await fallbackCase('stale', leaveStaleSocket);
    expect(ran).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(events.map((event) => event.type)).toEqual(['PromptSubmitted']);

    const publisher = await embeddedHookPublisher(config, dir, 1_000);
    const replaced = await serveHookSocket({
      mode: 'embedded',
      dataDir: dir,
      config,
      publisher,
      openMemory: () => Promise.resolve(null),
      log: () => undefined,
    });
    try {
      expect(replaced).not.toBeNull();
      const again = await runHook(dir, prompt('stale-session', 'and again'), ['--no-context']);
      expect(again).toEqual({ code: 0, stdout: '', stderr: '' });
      expect(replaced!.served).toBe(1);
      expect(eventsIn(dir).map((event) => event.type)).toEqual([
        'PromptSubmitted',
        'PromptSubmitted',
      ]);
    } finally {
      await replaced?.stop();
    }
    expect(existsSync(hookSocketPath(dir))).toBe(false);
  }, 60_000);

  it('should publish directly when the service is configured otherwise', async () => {
    let published = 0;
    let refusing: HookSocketServer | null = null;
    const { ran, events } = await fallbackCase('refused', async (socket) => {
      refusing = await serveHookSocket({
        mode: 'embedded',
        dataDir: join(socket, '..'),
        config: parseConfig({ ENGRAM_TOPIC_PREFIX: 'elsewhere.' }),
        publisher: {
          publish: (batch) => Promise.resolve(void (published += batch.length)),
          close: () => Promise.resolve(),
        },
        openMemory: () => Promise.resolve(null),
        log: () => undefined,
      });
    });
    try {
      expect(ran.code).toBe(0);
      expect(ran.stderr).toMatch(/the service did not take the event \(.*settings differ/);
      expect(published).toBe(0);
      expect(refusing!.served).toBe(0);
      expect(events.map((event) => event.type)).toEqual(['PromptSubmitted']);
    } finally {
      await refusing!.stop();
    }
  }, 60_000);

  it('should publish directly when the service does not answer within the handshake', async () => {
    let silent: Server | null = null;
    const started = Date.now();
    const { ran, events } = await fallbackCase('silent', async (socket) => {
      silent = createServer(() => undefined); // takes connections, never answers
      await new Promise<void>((resolve) => silent!.listen(socket, resolve));
    });
    try {
      expect(ran.code).toBe(0);
      expect(ran.stderr).toMatch(/the service did not take the event \(the service is busy\)/);
      expect(events.map((event) => event.type)).toEqual(['PromptSubmitted']);
      expect(Date.now() - started).toBeGreaterThan(250);
    } finally {
      silent!.close();
    }
  }, 60_000);
});

/** A socket file nothing listens on, as a killed `engram start` leaves it. */
async function leaveStaleSocket(socket: string): Promise<void> {
  const child = spawn(process.execPath, [
    '-e',
    `require('node:net').createServer().listen(${JSON.stringify(socket)}, () => process.kill(process.pid, 'SIGKILL'))`,
  ]);
  await new Promise((resolve) => child.on('exit', resolve));
  expect(statSync(socket).isSocket()).toBe(true);
}
