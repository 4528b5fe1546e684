import { LEXICAL_ONLY_EMBEDDER, RetrievalIndexer } from '@engram/app-retrieval';
import {
  AUTH_FILE,
  CURRENT_SESSION,
  indexRpcCorpus,
  PROJECT,
  rpcCorpus,
  TENANT,
} from '@engram/app-retrieval/testing';
import type { Typed } from '@engram/contracts';
import { FILES_GONE_MANIFEST_INTERVAL_MS } from '@engram/core';
import { SqliteRetrievalStore, sqliteStoreWriter } from '@engram/embedded';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HookSessionStore } from '../hook-session-store';
import { HookSpool } from '../hook-spool';
import { workingTreeExists } from '../working-tree';
import {
  embeddedHookMemory,
  resolveHookProject,
  runHook,
  type HookOutcome,
  type HookRun,
} from './hook.command';

// Seed 002 §7 layer 1 in the hook (issue #20): a memory whose every related file is gone from
// the working tree is not printed, one about an existing file is — on a real store, a real
// working tree and runHook's whole path (payload cwd → project root → check → stdout). And the
// hook tells the service: a fresh FileManifest of the project root (at most one per root per 10
// minutes, none without git), on a real git work tree.

let dir: string;
let repo: string;
let dataDir: string;
/** What the hooks published, in order. */
let published: Typed[];

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'engram-hook-tree-'));
  repo = join(dir, 'api');
  mkdirSync(join(repo, '.git'), { recursive: true });
  writeFileSync(join(repo, '.git', 'HEAD'), 'ref: refs/heads/main\n');
  dataDir = join(dir, 'data');
  published = [];
  const store = SqliteRetrievalStore.open({ dataDir });
  await indexRpcCorpus(
    new RetrievalIndexer(LEXICAL_ONLY_EMBEDDER, sqliteStoreWriter(store)),
    rpcCorpus(Date.now()),
  );
  store.close();
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function create(path: string): void {
  mkdirSync(dirname(join(repo, path)), { recursive: true });
  writeFileSync(join(repo, path), 'export {};\n');
}

/** One hook, as a separate hook process would run it (its own stores on the same data dir). */
async function hookRun(
  event: string,
  fields: Record<string, unknown>,
  extra: Partial<HookRun> = {},
): Promise<HookOutcome> {
  const spool = new HookSpool(join(dir, 'spool'));
  return runHook({
    input: JSON.stringify({
      session_id: CURRENT_SESSION,
      transcript_path: `/home/dev/.claude/projects/x/${CURRENT_SESSION}.jsonl`,
      cwd: repo,
      hook_event_name: event,
      ...fields,
    }),
    budgetMs: 1_000,
    contextBudgetMs: 5_000,
    spool,
    sessions: new HookSessionStore(spool.dir),
    project: (cwd) => resolveHookProject(cwd, { tenant: TENANT, project: PROJECT }),
    openPublisher: () =>
      Promise.resolve({
        publish: (events) => {
          published.push(...events);
          return Promise.resolve();
        },
        close: async () => {},
      }),
    openMemory: () => embeddedHookMemory(dataDir),
    ...extra,
  });
}

/** The additionalContext a hook printed ('' for none). */
function contextOf(outcome: HookOutcome): string {
  if (outcome.stdout === null) return '';
  return (JSON.parse(outcome.stdout) as { hookSpecificOutput: { additionalContext: string } })
    .hookSpecificOutput.additionalContext;
}

async function hook(event: string, fields: Record<string, unknown>): Promise<string> {
  return contextOf(await hookRun(event, fields));
}

const readAuthFile = () =>
  hook('PreToolUse', {
    tool_name: 'Read',
    tool_use_id: 'toolu_1',
    tool_input: { file_path: join(repo, AUTH_FILE) },
  });
const askAboutLogout = () => hook('UserPromptSubmit', { prompt: 'the logout mutex again' });

describe('engram hook checks injected memories against the working tree', () => {
  it('prints the warnings about a file that exists', async () => {
    create(AUTH_FILE);
    const injected = await readAuthFile();
    expect(injected).toContain('**Memory context for this file:**');
    expect(injected).toContain('[inj-gotc]');
    expect(await askAboutLogout()).toContain('Work state');
  });

  it('does not print a memory whose every related file is gone', async () => {
    // src/auth/refresh.ts was deleted: the gotcha and the work state about it go quiet.
    create('src/db/pool.ts');
    expect(await readAuthFile()).toBe('');
    const context = await askAboutLogout();
    expect(context).not.toContain('Work state');
    expect(context).toContain('[turn-p-now-3]');
  });
});

const POOL_FILE = 'src/db/pool.ts';
const T = Date.UTC(2026, 10, 27, 12);

function git(...args: string[]): void {
  execFileSync('git', ['-C', repo, '-c', 'user.name=t', '-c', 'user.email=t@t', ...args], {
    stdio: 'ignore',
  });
}

/** A real git work tree (in place of the bare .git/HEAD) with the auth module and pool committed. */
function committedRepo(): void {
  rmSync(join(repo, '.git'), { recursive: true });
  git('init', '-q');
  create(AUTH_FILE);
  create(POOL_FILE);
  git('add', '.');
  git('commit', '-q', '-m', 'init');
}

/** A PreToolUse(Read) of the auth file at `at`: its context, the manifests it published. */
async function readAuthFileAt(
  at: number,
  extra: Partial<HookRun> = {},
): Promise<{ context: string; manifests: Typed<'FileManifest'>[]; messages: string[] }> {
  const before = published.length;
  const outcome = await hookRun(
    'PreToolUse',
    {
      tool_name: 'Read',
      tool_use_id: `toolu_${at}`,
      tool_input: { file_path: join(repo, AUTH_FILE) },
    },
    { now: () => at, ...extra },
  );
  const manifests = published
    .slice(before)
    .filter((event): event is Typed<'FileManifest'> => event.type === 'FileManifest');
  return { context: contextOf(outcome), manifests, messages: outcome.messages };
}

describe('engram hook tells the service when a memory’s files are all gone', () => {
  it('publishes exactly one manifest, of the files still in the working tree', async () => {
    committedRepo();
    rmSync(join(repo, AUTH_FILE)); // a plain rm: still in git's index
    const { context, manifests } = await readAuthFileAt(T);
    expect(context).toBe('');
    expect(manifests).toHaveLength(1);
    expect(manifests[0]).toMatchObject({
      tenantId: TENANT,
      projectId: PROJECT,
      sessionId: CURRENT_SESSION,
      timestamp: T,
      files: [POOL_FILE],
    });
    expect(manifests[0].headSha).toMatch(/^[0-9a-f]{40}$/);
  });

  it('lists the untracked files git does not ignore, so a new file’s memory stays current', async () => {
    committedRepo();
    rmSync(join(repo, AUTH_FILE));
    create('src/db/new-pool.ts'); // the agent's new file, not committed yet
    create('build/out.js');
    writeFileSync(join(repo, '.gitignore'), 'build/\n');
    const { manifests } = await readAuthFileAt(T);
    expect(manifests).toHaveLength(1);
    expect([...manifests[0].files].sort()).toEqual(['.gitignore', 'src/db/new-pool.ts', POOL_FILE]);
  });

  it('publishes none while every injected memory’s file is there', async () => {
    committedRepo();
    const { context, manifests } = await readAuthFileAt(T);
    expect(context).toContain('[inj-gotc]');
    expect(manifests).toEqual([]);
  });

  it('publishes at most one per project root per interval, across hook processes', async () => {
    committedRepo();
    rmSync(join(repo, AUTH_FILE));
    expect((await readAuthFileAt(T)).manifests).toHaveLength(1);
    expect((await readAuthFileAt(T + 60_000)).manifests).toEqual([]);
    expect((await readAuthFileAt(T + FILES_GONE_MANIFEST_INTERVAL_MS - 1)).manifests).toEqual([]);
    // The interval over: the next check publishes again, a new event.
    const later = await readAuthFileAt(T + FILES_GONE_MANIFEST_INTERVAL_MS);
    expect(later.manifests).toHaveLength(1);
    expect(later.manifests[0].eventId).not.toBe(published[0].eventId);
    expect(later.context).toBe('');
  });

  it('publishes none outside a git work tree or before its first commit, and fails nothing', async () => {
    rmSync(join(repo, '.git'), { recursive: true }); // the temporary directory is in no repository
    create(POOL_FILE);
    const outside = await readAuthFileAt(T);
    expect(outside.context).toBe('');
    expect(outside.manifests).toEqual([]);
    expect(outside.messages).toEqual([]);
    git('init', '-q'); // a repository without a commit: no HEAD to list against
    const uncommitted = await readAuthFileAt(T + 1);
    expect(uncommitted.manifests).toEqual([]);
    expect(uncommitted.messages).toEqual([]);
  });

  it('publishes none when git cannot run, with a line for stderr', async () => {
    committedRepo();
    rmSync(join(repo, AUTH_FILE));
    const noGit = await readAuthFileAt(T, {
      git: () => Promise.reject(new Error('spawn git ENOENT')),
    });
    expect(noGit.context).toBe('');
    expect(noGit.manifests).toEqual([]);
    expect(noGit.messages).toEqual(['engram hook: no FileManifest (spawn git ENOENT)']);
  });
});

describe('workingTreeExists', () => {
  it('answers for files under the root, lstat-ing links without following them out', () => {
    create('src/a.ts');
    const outside = join(dir, 'outside');
    mkdirSync(outside);
    writeFileSync(join(outside, 'secret.ts'), 'x');
    symlinkSync(outside, join(repo, 'linked-dir'));
    symlinkSync(join(outside, 'gone.ts'), join(repo, 'dangling.ts'));
    const exists = workingTreeExists(repo);
    expect(exists('src/a.ts')).toBe(true);
    expect(exists('src/b.ts')).toBe(false);
    expect(exists('nowhere/b.ts')).toBe(false);
    expect(exists('src/a.ts/b.ts')).toBe(false);
    // A link in the tree is there (its target is not looked at).
    expect(exists('dangling.ts')).toBe(true);
    // A directory link that leads out of the root is not followed.
    expect(() => exists('linked-dir/secret.ts')).toThrow(/out of the project root/);
  });
});
