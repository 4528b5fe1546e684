import { DEFAULT_RANKING_CONFIG } from '@engram/core';
import { resetConfigForTests } from '@engram/config';
import { tenantTokens } from '@engram/core';
import { SqliteRetrievalStore, sqliteStoreWriter } from '@engram/embedded';
import { Logger, type INestMicroservice } from '@nestjs/common';
import { Command } from 'commander';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { freePort } from '../../../test/support/free-port';
import {
  serveRecallGrpc,
  RetrievalIndexer,
  createRecallStack,
  sqliteBackend,
  LEXICAL_ONLY_EMBEDDER,
} from '@engram/app-retrieval';
import {
  PROJECT,
  TENANT,
  AUTH_FILE,
  CURRENT_SESSION,
  indexRpcCorpus,
  REVIEW_QUEUE,
  rpcCorpus,
} from '@engram/app-retrieval/testing';
import type { RecallStack } from '@engram/app-retrieval';
import {
  embeddedHookMemory,
  grpcHookMemory,
  registerHookCommand,
  type HookMemory,
} from './commands/hook.command';

// `engram hook --distributed` takes its memory context from the recall gRPC API (issue #7): the
// real server (serveRecallGrpc, here over the embedded SQLite store with the rpc corpus indexed,
// bearer tokens on) answers BuildContext and InjectForFile; the hook prints the same text as
// embedded mode. With the server down or silent, the hook prints nothing, says why on stderr,
// and exits 0 within its context budget.

const TOKEN = 'hook-token';
let root: string;
let dataDir: string;
let repo: string;
let store: SqliteRetrievalStore;
let stack: RecallStack;
let app: INestMicroservice;
let url: string;

beforeAll(async () => {
  Logger.overrideLogger(false); // kafkajs's refused connections (a dead broker) log as errors
  root = mkdtempSync(join(tmpdir(), 'engram-hook-grpc-'));
  dataDir = join(root, 'data');
  repo = join(root, 'api');
  mkdirSync(join(repo, '.git'), { recursive: true });
  // The file the corpus's memories are about exists in the working tree (they are injected).
  mkdirSync(join(repo, 'src', 'auth'), { recursive: true });
  writeFileSync(join(repo, AUTH_FILE), 'export {};\n');
  store = SqliteRetrievalStore.open({ dataDir });
  const indexer = new RetrievalIndexer(LEXICAL_ONLY_EMBEDDER, sqliteStoreWriter(store));
  await indexRpcCorpus(indexer, rpcCorpus(Date.now()));
  stack = createRecallStack({
    ranking: DEFAULT_RANKING_CONFIG,
    backend: sqliteBackend(store),
    embedder: LEXICAL_ONLY_EMBEDDER,
  });
  ({ app, url } = await serveRecallGrpc(stack, {
    url: `127.0.0.1:${await freePort()}`,
    tokens: tenantTokens({ [TOKEN]: { tenants: [TENANT], role: 'read' } }),
    logger: false,
  }));
}, 60_000);

afterAll(async () => {
  await app?.close();
  await stack?.access.close();
  store?.close();
  rmSync(root, { recursive: true, force: true });
  Logger.overrideLogger(['log', 'warn', 'error']);
});

afterEach(() => {
  vi.unstubAllEnvs();
  resetConfigForTests();
});

const scope = { tenantId: TENANT, projectId: PROJECT, sessionId: CURRENT_SESSION };

describe('grpcHookMemory', () => {
  it('should print what embedded mode prints, from the recall gRPC API', async () => {
    const remote = await grpcHookMemory(
      { recall: { grpcUrl: url, token: TOKEN } },
      Date.now() + 20_000,
    );
    const local = (await embeddedHookMemory(dataDir))!;
    const both = async (ask: (memory: HookMemory) => Promise<string>) => {
      const answers = [await ask(remote), await ask(local)];
      expect(answers[0]).toBe(answers[1]);
      return answers[0];
    };
    try {
      const context = await both((m) => m.buildContext(scope, 'the logout mutex again'));
      expect(context).toMatch(/^Engram memory for this request \(recalled from past sessions/);
      expect(context).toContain('[turn-p-now-3] User: is it the logout mutex again?');
      expect(context).toContain('[ws-work-sta] Work state');
      const injected = await both((m) =>
        m.injectForFile(scope, join('/home/dev/api', AUTH_FILE), 'Edit'),
      );
      expect(injected).toContain('**Memory context for this file:**');
      expect(injected).toContain('[inj-gotc]');
      // Write is an edit, Grep injects nothing: the same rule on both paths.
      expect(await both((m) => m.injectForFile(scope, AUTH_FILE, 'Write'))).toContain('[inj-gotc]');
      expect(await both((m) => m.injectForFile(scope, AUTH_FILE, 'Grep'))).toBe('');
    } finally {
      await remote.close();
      await local.close();
    }
  });

  it('should leave out, as embedded mode does, what is about files gone from the working tree', async () => {
    // BuildContext's items carry their related files over gRPC (ContextItem.related_files).
    const remote = await grpcHookMemory(
      { recall: { grpcUrl: url, token: TOKEN } },
      Date.now() + 20_000,
    );
    const local = (await embeddedHookMemory(dataDir))!;
    const emptyTree = join(root, 'empty-tree');
    mkdirSync(emptyTree, { recursive: true });
    const deleted = { ...scope, projectRoot: emptyTree };
    const present = { ...scope, projectRoot: repo };
    try {
      for (const memory of [remote, local]) {
        const kept = await memory.buildContext(present, 'the logout mutex again');
        expect(kept).toContain('[ws-work-sta] Work state');
        const context = await memory.buildContext(deleted, 'the logout mutex again');
        expect(context).toContain('[turn-p-now-3] User: is it the logout mutex again?');
        expect(context).not.toContain('Work state');
        expect(await memory.injectForFile(present, AUTH_FILE, 'Edit')).toContain('[inj-gotc]');
        expect(await memory.injectForFile(deleted, AUTH_FILE, 'Edit')).toBe('');
      }
    } finally {
      await remote.close();
      await local.close();
    }
  });

  it("should count the project's flagged memories at SessionStart as embedded mode does", async () => {
    // A read token suffices for ListForReview; no review API configured: proposals not asked.
    const remote = await grpcHookMemory(
      { recall: { grpcUrl: url, token: TOKEN } },
      Date.now() + 20_000,
    );
    const local = (await embeddedHookMemory(dataDir))!;
    const refused = await grpcHookMemory({ recall: { grpcUrl: url } }, Date.now() + 20_000);
    try {
      const expected = { proposals: 0, memories: REVIEW_QUEUE.length, memoriesCapped: false };
      expect(await remote.pendingReviews!(scope)).toEqual(expected);
      expect(await local.pendingReviews!(scope)).toEqual(expected);
      // A count the server refuses is left out: nothing to say, and no failure.
      expect(await refused.pendingReviews!(scope)).toEqual({
        proposals: 0,
        memories: 0,
        memoriesCapped: false,
      });
    } finally {
      await remote.close();
      await local.close();
      await refused.close();
    }
  });

  it("should be refused without the server's token, with the status on the error", async () => {
    const memory = await grpcHookMemory({ recall: { grpcUrl: url } }, Date.now() + 20_000);
    try {
      await expect(memory.buildContext(scope, 'logout')).rejects.toThrow(
        `BuildContext at ${url}: UNAUTHENTICATED`,
      );
    } finally {
      await memory.close();
    }
  });
});

// ---- the command itself, in process (as hook-round-trip.spec.ts): stdin in, stdout out ----

let captured = '';
const capture = (chunk: string | Uint8Array, ...rest: unknown[]): boolean => {
  captured += String(chunk);
  rest.find((arg): arg is () => void => typeof arg === 'function')?.();
  return true;
};

interface HookResult {
  stdout: string;
  stderr: string;
  ms: number;
}

let runs = 0;

/**
 * `engram hook --distributed <args>` with `input` on stdin, in this environment; each run with a
 * data directory of its own (its spool: a prompt spooled by one run is not drained by the next).
 */
async function engramHook(input: string, args: string[]): Promise<HookResult> {
  const program = new Command().name('engram').exitOverride();
  registerHookCommand(program);
  const stdin = Object.getOwnPropertyDescriptor(process, 'stdin')!;
  const write = process.stdout.write.bind(process.stdout);
  let stderr = '';
  captured = '';
  Object.defineProperty(process, 'stdin', {
    value: Readable.from([Buffer.from(input)]),
    configurable: true,
  });
  process.stdout.write = capture;
  const exit = vi.spyOn(process, 'exit').mockImplementation((() => undefined) as never);
  const errors = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
    stderr += String(chunk);
    return true;
  });
  const started = Date.now();
  try {
    await program.parseAsync([
      'node',
      'engram',
      'hook',
      '--distributed',
      '--data-dir',
      join(root, `hook-${++runs}`),
      '--tenant',
      TENANT,
      '--project',
      PROJECT,
      ...args,
    ]);
    expect(exit).toHaveBeenCalledWith(0); // the hook always exits 0
  } finally {
    Object.defineProperty(process, 'stdin', stdin);
    process.stdout.write = write;
    exit.mockRestore();
    errors.mockRestore();
  }
  return { stdout: captured, stderr, ms: Date.now() - started };
}

function payload(hook: string, fields: Record<string, unknown>): string {
  return JSON.stringify({
    session_id: CURRENT_SESSION,
    transcript_path: `/home/dev/.claude/projects/api/${CURRENT_SESSION}.jsonl`,
    cwd: repo,
    hook_event_name: hook,
    ...fields,
  });
}
const promptPayload = () =>
  payload('UserPromptSubmit', { prompt: 'is it the logout mutex again?' });
const editPayload = () =>
  payload('PreToolUse', {
    tool_name: 'Edit',
    tool_use_id: 'toolu_01',
    tool_input: { file_path: join(repo, AUTH_FILE), old_string: 'a', new_string: 'b' },
  });

function additionalContext(stdout: string, hookEventName: string): string {
  const output = JSON.parse(stdout) as {
    hookSpecificOutput: { hookEventName: string; additionalContext: string };
  };
  expect(output.hookSpecificOutput.hookEventName).toBe(hookEventName);
  return output.hookSpecificOutput.additionalContext;
}

/** The configuration the hook reads: this recall URL, and a Kafka nothing listens on. */
async function environment(recallUrl: string, token?: string): Promise<void> {
  vi.stubEnv('ENGRAM_RECALL_GRPC_URL', recallUrl);
  if (token) vi.stubEnv('ENGRAM_RECALL_TOKEN', token);
  vi.stubEnv('ENGRAM_KAFKA_BROKERS', `127.0.0.1:${await freePort()}`);
  resetConfigForTests();
}

describe('engram hook --distributed', () => {
  it('should print BuildContext and InjectForFile from the recall gRPC API', async () => {
    await environment(url, TOKEN);
    // Kafka is down: the prompt is spooled within --budget-ms, then the context is asked for
    // (the context budget counts from the start, publishing included).
    const prompted = await engramHook(promptPayload(), [
      '--budget-ms',
      '2000',
      '--context-budget-ms',
      '10000',
    ]);
    expect(prompted.stderr).toMatch(/1 event\(s\) spooled/);
    const context = additionalContext(prompted.stdout, 'UserPromptSubmit');
    expect(context).toMatch(/^Engram memory for this request \(recalled from past sessions/);
    expect(context).toContain('[turn-p-now-3] User: is it the logout mutex again?');
    expect(context).toContain('[ws-work-sta] Work state');

    const editing = await engramHook(editPayload(), []);
    expect(editing.stderr).toBe('');
    const injected = additionalContext(editing.stdout, 'PreToolUse');
    expect(injected).toContain('**Memory context for this file:**');
    expect(injected).toContain('[inj-gotc]');
  }, 30_000);

  it('should print nothing and exit 0 at once when the recall server is down', async () => {
    const nothing = `127.0.0.1:${await freePort()}`;
    await environment(nothing, TOKEN);
    const editing = await engramHook(editPayload(), ['--context-budget-ms', '1500']);
    expect(editing.stdout).toBe('');
    expect(editing.stderr).toMatch(
      new RegExp(`^engram hook: no memory context \\(InjectForFile at ${nothing}: UNAVAILABLE`),
    );
    expect(editing.ms).toBeLessThan(1_500);
  });

  it('should give up a silent recall server at the context budget and exit 0', async () => {
    // Accepts connections and never answers (a hung server): only the deadline ends the call.
    const sockets: Socket[] = [];
    const silent: Server = createServer((socket) => void sockets.push(socket));
    const port = await freePort();
    await new Promise<void>((resolve) => silent.listen(port, '127.0.0.1', resolve));
    try {
      await environment(`127.0.0.1:${port}`);
      const editing = await engramHook(editPayload(), ['--context-budget-ms', '700']);
      expect(editing.stdout).toBe('');
      expect(editing.stderr).toMatch(/^engram hook: no memory context \(/);
      expect(editing.ms).toBeGreaterThanOrEqual(600);
      expect(editing.ms).toBeLessThan(700 + 1_000);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});
