import { loadConfig } from '@engram/config';
import type { Typed } from '@engram/contracts';
import { SqliteEventLog } from '@engram/embedded';
import BetterSqlite3 from 'better-sqlite3';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteRetrievalStore, sqliteStoreWriter } from '@engram/embedded';
import { RetrievalIndexer, LEXICAL_ONLY_EMBEDDER } from '@engram/app-retrieval';
import {
  PROJECT,
  TENANT,
  AUTH_FILE,
  CURRENT_SESSION,
  indexRpcCorpus,
  rpcCorpus,
} from '@engram/app-retrieval/testing';
import { HookSessionStore } from '../hook-session-store';
import { HookSpool } from '../hook-spool';
import {
  embeddedHookPublisher,
  embeddedHookMemory,
  flushSpool,
  GIT_LS_FILES_MAX_BYTES,
  resolveHookProject,
  runHook,
  type HookMemory,
  type HookPublisher,
  type HookRun,
} from './hook.command';

// Recorded-shape payloads (code.claude.com/docs/en/hooks, "Hook input").
const SESSION = 'c0ffee00-1111-4222-8333-444455556666';
let dir: string;
let repo: string;

function payload(hook: string, fields: Record<string, unknown> = {}): string {
  return JSON.stringify({
    session_id: SESSION,
    transcript_path: `/home/dev/.claude/projects/x/${SESSION}.jsonl`,
    cwd: repo,
    hook_event_name: hook,
    ...fields,
  });
}
const prompt = (text: string) => payload('UserPromptSubmit', { prompt: text });
const read = (id: string) =>
  payload('PostToolUse', {
    tool_name: 'Read',
    tool_use_id: id,
    tool_input: { file_path: join(repo, 'src/a.ts') },
    tool_response: { type: 'text', file: { filePath: join(repo, 'src/a.ts'), content: 'x' } },
  });

/** A publisher whose behaviour the test switches: up, down, or hanging forever. */
function fakeLog() {
  const published: Typed[] = [];
  const state = { mode: 'up' as 'up' | 'down' | 'hang' | 'hang-open', closed: 0 };
  const open = (): Promise<HookPublisher> => {
    if (state.mode === 'hang-open') return new Promise(() => undefined);
    return Promise.resolve({
      publish: (events: Typed[]) => {
        if (state.mode === 'down') return Promise.reject(new Error('connection refused'));
        if (state.mode === 'hang') return new Promise<void>(() => undefined);
        published.push(...events);
        return Promise.resolve();
      },
      close: () => {
        state.closed += 1;
        return Promise.resolve();
      },
    });
  };
  return { published, state, open };
}

function hook(input: string, open: () => Promise<HookPublisher>, extra: Partial<HookRun> = {}) {
  const spool = new HookSpool(join(dir, 'spool'));
  return runHook({
    input,
    budgetMs: 300,
    spool,
    sessions: new HookSessionStore(spool.dir),
    project: (cwd) => resolveHookProject(cwd, { tenant: 'acme' }),
    openPublisher: open,
    ...extra,
  });
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'engram-hook-'));
  repo = join(dir, 'shop');
  mkdirSync(join(repo, '.git', 'refs', 'heads'), { recursive: true });
  writeFileSync(join(repo, '.git', 'HEAD'), 'ref: refs/heads/fix/login-timeout\n');
  mkdirSync(join(repo, '.git', 'refs', 'heads', 'fix'));
  writeFileSync(join(repo, '.git', 'refs', 'heads', 'fix', 'login-timeout'), `${'b'.repeat(40)}\n`);
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('runHook', () => {
  it('should publish the mapped events of a session', async () => {
    const log = fakeLog();
    await hook(payload('SessionStart', { source: 'startup' }), log.open);
    await hook(prompt('fix the login test'), log.open);
    const outcome = await hook(read('toolu_1'), log.open);
    expect(outcome).toMatchObject({ published: 1, spooled: 0, timedOut: false, stdout: null });
    expect(log.published.map((event) => event.type)).toEqual([
      'SessionStarted',
      'PromptSubmitted',
      'ToolCallObserved',
    ]);
    expect(log.published[0]).toMatchObject({
      tenantId: 'acme',
      projectId: 'shop',
      gitBranch: 'fix/login-timeout',
      gitHeadSha: 'b'.repeat(40),
    });
    expect(log.published[2]).toMatchObject({ filePaths: ['src/a.ts'], promptId: 1, stepIndex: 1 });
    expect(log.state.closed).toBe(3);
  });

  it('should spool on failure and publish the spool first when the log is back', async () => {
    const log = fakeLog();
    log.state.mode = 'down';
    const failed = await hook(prompt('first'), log.open);
    expect(failed).toMatchObject({ published: 0, spooled: 1 });
    expect(failed.messages.join('\n')).toContain('connection refused');
    await hook(read('toolu_1'), log.open);
    log.state.mode = 'up';
    const recovered = await hook(prompt('second'), log.open);
    expect(recovered).toMatchObject({ drained: 2, published: 1, spooled: 0 });
    expect(log.published.map((event) => event.type)).toEqual([
      'PromptSubmitted',
      'ToolCallObserved',
      'PromptSubmitted',
    ]);
    expect(log.published.map((event) => (event as { promptId: number }).promptId)).toEqual([
      1, 1, 2,
    ]);
    expect(new HookSpool(join(dir, 'spool')).isEmpty()).toBe(true);
  });

  it('should spool to the fallback when the data dir is a file, say so, and drain it later', async () => {
    // Issue 19 finding 5: the hook exited 0 and dropped the events ("could not spool").
    const log = fakeLog();
    log.state.mode = 'down';
    const broken = join(dir, 'data-file');
    writeFileSync(broken, 'x');
    const fallback = new HookSpool(join(dir, 'fallback'));
    const spool = new HookSpool(join(broken, 'spool'));
    const sessions = new HookSessionStore(spool.dir, { fallbackSpoolDirs: [fallback.dir] });
    const failed = await hook(prompt('first'), log.open, {
      spool,
      fallbackSpools: [fallback],
      sessions,
    });
    expect(failed).toMatchObject({ published: 0, spooled: 1 });
    expect(failed.messages.join('\n')).toContain(`spooled in ${fallback.dir} instead`);
    expect(fallback.size()).toBe(1);
    // The data dir works again: the fallback's events first, then this hook's.
    log.state.mode = 'up';
    const healthy = new HookSpool(join(dir, 'spool'));
    const recovered = await hook(prompt('second'), log.open, {
      spool: healthy,
      fallbackSpools: [fallback],
      sessions: new HookSessionStore(healthy.dir, { fallbackSpoolDirs: [fallback.dir] }),
    });
    expect(recovered).toMatchObject({ drained: 1, published: 1 });
    expect(log.published.map((event) => (event as { promptId: number }).promptId)).toEqual([1, 2]);
    expect(fallback.isEmpty()).toBe(true);
  });

  it('should publish every event exactly once across failures and recovery', async () => {
    const log = fakeLog();
    const inputs = [prompt('a'), read('t1'), read('t2'), prompt('b'), read('t3'), prompt('c')];
    for (const [i, input] of inputs.entries()) {
      log.state.mode = i % 2 === 0 ? 'down' : 'up';
      await hook(input, log.open);
    }
    log.state.mode = 'up';
    expect(await flushSpool(new HookSpool(join(dir, 'spool')), log.open, 5_000)).toMatchObject({
      left: 0,
      error: null,
    });
    const ids = log.published.map((event) => event.eventId);
    expect(ids).toHaveLength(inputs.length);
    expect(new Set(ids).size).toBe(inputs.length);
    expect(
      log.published
        .filter((event) => event.type === 'ToolCallObserved')
        .map((event) => (event as { stepIndex: number }).stepIndex),
    ).toEqual([1, 2, 3]);
  });

  it('should keep the budget when the log hangs, and spool', async () => {
    const log = fakeLog();
    log.state.mode = 'hang';
    const started = Date.now();
    const outcome = await hook(prompt('hello'), log.open, { budgetMs: 100 });
    // Generous: the machine is shared; what matters is that it returns and spools.
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(outcome).toMatchObject({ timedOut: true, spooled: 1, published: 0 });
    log.state.mode = 'up';
    await hook(prompt('again'), log.open);
    expect(log.published.map((event) => (event as { promptId: number }).promptId)).toEqual([1, 2]);
  });

  it('should keep the budget when connecting hangs', async () => {
    const log = fakeLog();
    log.state.mode = 'hang-open';
    const started = Date.now();
    const outcome = await hook(read('t1'), log.open, { budgetMs: 100 });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(outcome).toMatchObject({ timedOut: true, spooled: 1 });
  });

  it.each([['not json at all'], [''], ['{"hook_event_name":"Stop"}']])(
    'should answer malformed input %j with a message and nothing else',
    async (input) => {
      const log = fakeLog();
      const outcome = await hook(input, log.open);
      expect(outcome.stdout).toBeNull();
      expect(outcome.messages.join('\n')).toMatch(/^engram hook: .*nothing published/);
      expect(log.published).toEqual([]);
    },
  );

  it('should open no publisher for a hook with nothing to publish', async () => {
    const log = fakeLog();
    log.state.mode = 'hang-open';
    const started = Date.now();
    const outcome = await hook(payload('Stop'), log.open, { budgetMs: 5_000 });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(outcome.timedOut).toBe(false);
  });

  it("should print the recalled context as Claude Code's additionalContext", async () => {
    const log = fakeLog();
    const asked: unknown[] = [];
    const memory: HookMemory = {
      buildContext: (scope, query) => {
        asked.push({ scope, query });
        return Promise.resolve('- [gotcha m1] login tests need FAKE_CLOCK=1');
      },
      injectForFile: (_scope, file, tool) => Promise.resolve(`- about ${file} (${tool})`),
      close: () => Promise.resolve(),
    };
    const outcome = await hook(prompt('fix login'), log.open, {
      openMemory: () => Promise.resolve(memory),
    });
    expect(JSON.parse(outcome.stdout!)).toEqual({
      hookSpecificOutput: {
        hookEventName: 'UserPromptSubmit',
        additionalContext: '- [gotcha m1] login tests need FAKE_CLOCK=1',
      },
    });
    expect(asked).toEqual([
      {
        scope: {
          tenantId: 'acme',
          projectId: 'shop',
          sessionId: SESSION,
          projectRoot: repo,
          onFilesGone: expect.any(Function) as unknown,
        },
        query: 'fix login',
      },
    ]);
    const pre = await hook(
      payload('PreToolUse', {
        tool_name: 'Edit',
        tool_use_id: 't9',
        tool_input: { file_path: join(repo, 'src/a.ts'), old_string: 'a', new_string: 'b' },
      }),
      log.open,
      { openMemory: () => Promise.resolve(memory) },
    );
    expect(JSON.parse(pre.stdout!)).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        additionalContext: '- about src/a.ts (Edit)',
      },
    });
  });

  it('should publish before recalling, and give up context at the context budget', async () => {
    const log = fakeLog();
    const started = Date.now();
    const outcome = await hook(prompt('fix login'), log.open, {
      budgetMs: 100,
      contextBudgetMs: 200,
      openMemory: () => {
        // Publishing is over before recall starts.
        expect(log.published).toHaveLength(1);
        return new Promise(() => undefined);
      },
    });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(outcome).toMatchObject({ stdout: null, published: 1, timedOut: true });
    expect(outcome.messages.join('\n')).toContain('recall ran out of time');
  });
});

describe('embeddedHookPublisher', () => {
  it('should append to the embedded log the services read, and spool when it is locked', async () => {
    const config = loadConfig();
    const dataDir = join(dir, 'data');
    const spool = new HookSpool(join(dataDir, 'spool'));
    const run = (input: string) =>
      runHook({
        input,
        budgetMs: 2_000,
        spool,
        sessions: new HookSessionStore(spool.dir),
        project: (cwd) => resolveHookProject(cwd),
        openPublisher: () => embeddedHookPublisher(config, dataDir, 50),
      });
    expect(await run(prompt('hello'))).toMatchObject({ published: 1 });
    expect(await run(read('t1'))).toMatchObject({ published: 1 });
    const log = SqliteEventLog.open({ dataDir });
    try {
      const topic = `${config.topicPrefix}agent.prompts.v1`;
      const total = log.endOffsets(topic).reduce((a, b) => a + b, 0);
      expect(total).toBe(1);
      const [record] = log
        .endOffsets(topic)
        .flatMap((end, p) => (end > 0 ? log.read(topic, p, 0, 1) : []));
      expect(JSON.parse(record.value as string)).toMatchObject({
        type: 'PromptSubmitted',
        tenantId: 'default',
        projectId: 'shop',
        text: 'hello',
      });
    } finally {
      log.close();
    }
    // Another process holds the write lock past the busy timeout: spooled, then published.
    const holder = new BetterSqlite3(join(dataDir, 'events.db'));
    holder.exec('BEGIN IMMEDIATE');
    try {
      expect(await run(prompt('while locked'))).toMatchObject({ published: 0, spooled: 1 });
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }
    expect(await run(prompt('after'))).toMatchObject({ drained: 1, published: 1, spooled: 0 });
  });
});

describe('CommitMade from a Bash call that committed (issue #20)', () => {
  let api: string;
  const git = (...args: string[]) =>
    execFileSync(
      'git',
      [
        '-c',
        'user.name=Dev',
        '-c',
        'user.email=dev@example.com',
        '-c',
        'commit.gpgsign=false',
      ].concat(args),
      { cwd: api, encoding: 'utf8', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' } },
    ).trim();
  const bash = (command: string, id: string, response: Record<string, unknown> = {}) =>
    JSON.stringify({
      session_id: SESSION,
      transcript_path: `/home/dev/.claude/projects/x/${SESSION}.jsonl`,
      // A subdirectory: git prints paths from the top level, the project root, all the same.
      cwd: join(api, 'src'),
      hook_event_name: 'PostToolUse',
      tool_name: 'Bash',
      tool_use_id: id,
      tool_input: { command, description: 'Commit the refactoring' },
      tool_response: { stdout: '', stderr: '', interrupted: false, ...response },
    });

  beforeEach(() => {
    api = join(dir, 'api');
    mkdirSync(join(api, 'src', 'auth'), { recursive: true });
    git('init', '-q', '-b', 'main');
    const body = (name: string) =>
      `// ${name}\n${Array.from({ length: 20 }, (_, i) => `export const ${name}${i} = ${i};`).join('\n')}\n`;
    writeFileSync(join(api, 'src', 'auth', 'session.ts'), body('session'));
    writeFileSync(join(api, 'src', 'auth', 'legacy-cookie.ts'), body('legacy'));
    writeFileSync(join(api, 'src', 'auth', 'index.ts'), body('index'));
    git('add', '.');
    git('commit', '-q', '-m', 'auth module');
    // What the agent's Bash call did: a rename, a deletion, an edit, then the commit.
    git('mv', 'src/auth/session.ts', 'src/auth/sessions.ts');
    git('rm', '-q', 'src/auth/legacy-cookie.ts');
    writeFileSync(
      join(api, 'src', 'auth', 'index.ts'),
      `${body('index')}export * from './sessions';\n`,
    );
    git('add', '.');
    git('commit', '-q', '-m', 'refactor: sessions module, drop the legacy cookie parser');
  });

  it('should publish the commit with its rename and deletion to the embedded log, once', async () => {
    const config = loadConfig();
    const dataDir = join(dir, 'data');
    const spool = new HookSpool(join(dataDir, 'spool'));
    const run = (input: string) =>
      runHook({
        input,
        budgetMs: 2_000,
        spool,
        sessions: new HookSessionStore(spool.dir),
        project: (cwd) => resolveHookProject(cwd, { tenant: 'acme' }),
        openPublisher: () => embeddedHookPublisher(config, dataDir, 50),
      });
    const command = 'git add -A && git commit -m "refactor: sessions module"';
    const first = await run(bash(command, 'toolu_commit'));
    expect(first).toMatchObject({ published: 2, spooled: 0, messages: [] });
    // Hooks are delivered again at times: the same events, the same ids.
    expect(await run(bash(command, 'toolu_commit'))).toMatchObject({ published: 2 });

    const log = SqliteEventLog.open({ dataDir });
    let commits: Typed<'CommitMade'>[];
    try {
      commits = [...log.replay(`${config.topicPrefix}agent.lifecycle.v1`)]
        .map((record) => JSON.parse(String(record.value)) as Typed)
        .filter((event): event is Typed<'CommitMade'> => event.type === 'CommitMade');
    } finally {
      log.close();
    }
    expect(commits).toHaveLength(2);
    expect(commits[1].eventId).toBe(commits[0].eventId);
    expect(commits[0]).toMatchObject({
      type: 'CommitMade',
      tenantId: 'acme',
      projectId: 'api',
      sessionId: SESSION,
      agentId: 'claude-code',
      sha: git('rev-parse', 'HEAD'),
      changedFiles: ['src/auth/index.ts'],
      renamedFiles: [{ from: 'src/auth/session.ts', to: 'src/auth/sessions.ts' }],
      deletedFiles: ['src/auth/legacy-cookie.ts'],
      message: 'refactor: sessions module, drop the legacy cookie parser',
      branch: 'main',
    });
  });

  it('should run git only after a successful commit-creating call, and never fail on it', async () => {
    const log = fakeLog();
    const calls: string[] = [];
    const spy = (directory: string) => {
      calls.push(directory);
      return Promise.reject(new Error('git: command not found'));
    };
    const run = (input: string) => hook(input, log.open, { git: spy });
    expect(await run(bash('git status && npm test', 'toolu_1'))).toMatchObject({ published: 1 });
    expect(await run(bash('git commit -m x', 'toolu_2', { exit_code: 1 }))).toMatchObject({
      published: 1,
    });
    expect(calls).toEqual([]);
    // git fails: the tool call is published all the same, the failure said on stderr.
    const failed = await run(bash('git commit -m x', 'toolu_3'));
    expect(failed).toMatchObject({ published: 1, spooled: 0 });
    expect(failed.messages.join('\n')).toMatch(/no CommitMade for git commit.*command not found/);
    expect(calls).toEqual([join(api, 'src')]);
    // The real git, in another project (`git -C elsewhere commit`): not this project's commit.
    const other = await hook(bash(`git -C ${repo} commit -m x`, 'toolu_4'), log.open);
    expect(other).toMatchObject({ published: 1, messages: [] });
    expect(log.published.map((event) => event.type)).toEqual(Array(4).fill('ToolCallObserved'));
  });

  it('should publish nothing for a HEAD older than the call (nothing was committed)', async () => {
    const log = fakeLog();
    const outcome = await hook(bash('git commit -m x; git status', 'toolu_5'), log.open, {
      now: () => Date.now() + 60 * 60 * 1000,
    });
    expect(outcome).toMatchObject({ published: 1, messages: [] });
    expect(log.published.map((event) => event.type)).toEqual(['ToolCallObserved']);
  });
});

describe('FileManifest at SessionStart (issue #20)', () => {
  let api: string;
  const git = (...args: string[]) =>
    execFileSync(
      'git',
      [
        '-c',
        'user.name=Dev',
        '-c',
        'user.email=dev@example.com',
        '-c',
        'commit.gpgsign=false',
      ].concat(args),
      { cwd: api, encoding: 'utf8', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' } },
    ).trim();
  const start = (cwd: string, source = 'startup') =>
    JSON.stringify({
      session_id: SESSION,
      transcript_path: `/home/dev/.claude/projects/x/${SESSION}.jsonl`,
      cwd,
      hook_event_name: 'SessionStart',
      source,
    });

  beforeEach(() => {
    api = join(dir, 'api');
    mkdirSync(join(api, 'src', 'auth'), { recursive: true });
    git('init', '-q', '-b', 'main');
    writeFileSync(join(api, 'package.json'), '{}\n');
    writeFileSync(join(api, 'src', 'auth', 'token.ts'), 'export const a = 1;\n');
    writeFileSync(join(api, 'src', 'auth', 'with space\tand tab.ts'), 'export const b = 2;\n');
    writeFileSync(join(api, 'src', 'auth', 'legacy.ts'), 'export const c = 3;\n');
    git('add', '.');
    git('commit', '-q', '-m', 'first');
    git('rm', '-q', 'src/auth/legacy.ts');
    git('commit', '-q', '-m', 'drop legacy');
    // Not tracked yet, but there (an agent's new file): in the manifest. Ignored: not.
    writeFileSync(join(api, 'src', 'scratch.ts'), 'export const d = 4;\n');
    writeFileSync(join(api, '.git', 'info', 'exclude'), 'dist/\n');
    mkdirSync(join(api, 'dist'));
    writeFileSync(join(api, 'dist', 'token.js'), 'exports.a = 1;\n');
  });

  it('should publish the files of the whole project, once, from a subdirectory', async () => {
    const log = fakeLog();
    const first = await hook(start(join(api, 'src', 'auth')), log.open);
    expect(first).toMatchObject({ published: 2, spooled: 0, messages: [] });
    expect(log.published.map((event) => event.type)).toEqual(['SessionStarted', 'FileManifest']);
    const [started, manifest] = log.published as [Typed<'SessionStarted'>, Typed<'FileManifest'>];
    expect(manifest).toMatchObject({
      tenantId: 'acme',
      projectId: 'api',
      sessionId: SESSION,
      agentId: 'claude-code',
      headSha: git('rev-parse', 'HEAD'),
      timestamp: started.timestamp,
    });
    expect([...manifest.files].sort()).toEqual([
      'package.json',
      'src/auth/token.ts',
      'src/auth/with space\tand tab.ts',
      'src/scratch.ts',
    ]);
    // Delivered again (or resumed at the same HEAD): the same event id, a duplicate.
    await hook(start(api, 'resume'), log.open);
    const manifests = log.published.filter((event) => event.type === 'FileManifest');
    expect(manifests).toHaveLength(2);
    expect(manifests[1].eventId).toBe(manifest.eventId);
    // A compaction is the same session: no SessionStarted, no manifest.
    const compact = await hook(start(api, 'compact'), log.open);
    expect(compact).toMatchObject({ published: 0 });
  });

  it('should run ls-files in the project root, bounded, and never fail the hook on it', async () => {
    const log = fakeLog();
    const calls: unknown[][] = [];
    const spy = (...args: unknown[]) => {
      calls.push(args);
      return Promise.reject(new Error('stdout maxBuffer length exceeded'));
    };
    const outcome = await hook(start(join(api, 'src')), log.open, { git: spy });
    expect(outcome).toMatchObject({ published: 1, spooled: 0 });
    expect(outcome.messages).toEqual([
      'engram hook: no FileManifest (stdout maxBuffer length exceeded)',
    ]);
    expect(log.published.map((event) => event.type)).toEqual(['SessionStarted']);
    expect(calls).toEqual([
      [api, expect.arrayContaining(['ls-files', '-z']), 2_000, GIT_LS_FILES_MAX_BYTES],
    ]);
  });

  it('should not run git outside a repository with a HEAD', async () => {
    const log = fakeLog();
    const plain = join(dir, 'plain');
    mkdirSync(plain);
    const calls: string[] = [];
    const spy = (directory: string) => {
      calls.push(directory);
      return Promise.resolve('');
    };
    const outcome = await hook(start(plain), log.open, { git: spy });
    expect(outcome).toMatchObject({ published: 1, messages: [] });
    expect(calls).toEqual([]);
  });
});

describe('resolveHookProject', () => {
  it('should use the git root above the cwd, its name and HEAD', () => {
    mkdirSync(join(repo, 'src', 'deep'), { recursive: true });
    expect(resolveHookProject(join(repo, 'src', 'deep'))).toMatchObject({
      tenantId: 'default',
      projectId: 'shop',
      projectRoot: repo,
      agentId: 'claude-code',
      gitBranch: 'fix/login-timeout',
      gitHeadSha: 'b'.repeat(40),
    });
  });

  it('should read packed refs, detached heads and flags', () => {
    writeFileSync(join(repo, '.git', 'HEAD'), 'ref: refs/heads/main\n');
    writeFileSync(
      join(repo, '.git', 'packed-refs'),
      `# pack-refs\n${'c'.repeat(40)} refs/heads/main\n`,
    );
    expect(resolveHookProject(repo)).toMatchObject({
      gitBranch: 'main',
      gitHeadSha: 'c'.repeat(40),
    });
    writeFileSync(join(repo, '.git', 'HEAD'), `${'d'.repeat(40)}\n`);
    expect(resolveHookProject(repo, { project: 'p', tenant: 't', user: 'u' })).toMatchObject({
      projectId: 'p',
      tenantId: 't',
      userId: 'u',
      gitBranch: null,
      gitHeadSha: 'd'.repeat(40),
    });
  });
});

describe('embeddedHookMemory', () => {
  it('should print BuildContext and InjectForFile of the local store, and nothing without one', async () => {
    expect(await embeddedHookMemory(join(dir, 'no-store'))).toBeNull();
    const dataDir = join(dir, 'data');
    const store = SqliteRetrievalStore.open({ dataDir });
    const indexer = new RetrievalIndexer(LEXICAL_ONLY_EMBEDDER, sqliteStoreWriter(store));
    await indexRpcCorpus(indexer, rpcCorpus(Date.now()));
    store.close();
    const memory = (await embeddedHookMemory(dataDir))!;
    const scope = { tenantId: TENANT, projectId: PROJECT, sessionId: CURRENT_SESSION };
    try {
      const context = await memory.buildContext(scope, 'the logout mutex again');
      expect(context).toMatch(/^Engram memory for this request \(recalled from past sessions/);
      expect(context).toContain('[turn-p-now-3] User: is it the logout mutex again?');
      expect(context).toContain('[ep-e-3] You were asking about');
      expect(context).toContain('[ws-work-sta] Work state');
      const injected = await memory.injectForFile(scope, join('/home/dev/api', AUTH_FILE), 'Edit');
      expect(injected).toContain('**Memory context for this file:**');
      expect(injected).toContain('[inj-gotc]');
      expect(injected).not.toContain('inj-stal');
      expect(await memory.injectForFile(scope, AUTH_FILE, 'Write')).toContain('[inj-gotc]');
      expect(await memory.injectForFile(scope, AUTH_FILE, 'Grep')).toBe('');
      expect(await memory.injectForFile(scope, 'src/unknown.ts', 'Read')).toBe('');
      // another session's work state is not a fresh session's (issue #20)
      const elsewhere = { ...scope, sessionId: 'fresh-session' };
      expect(await memory.buildContext(elsewhere, null)).not.toContain('Work state');
    } finally {
      await memory.close();
    }
  });
});
