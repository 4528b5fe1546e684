import { LEXICAL_ONLY_EMBEDDER, RetrievalIndexer } from '@engram/app-retrieval';
import {
  AUTH_FILE,
  CURRENT_SESSION,
  indexRpcCorpus,
  PROJECT,
  rpcCorpus,
  TENANT,
} from '@engram/app-retrieval/testing';
import { SqliteRetrievalStore, sqliteStoreWriter } from '@engram/embedded';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HookSessionStore } from '../hook-session-store';
import { HookSpool } from '../hook-spool';
import { workingTreeExists } from '../working-tree';
import { embeddedHookMemory, resolveHookProject, runHook } from './hook.command';

// Seed 002 §7 layer 1 in the hook (issue #20): a memory whose every related file is gone from
// the working tree is not printed, one about an existing file is — on a real store, a real
// working tree and runHook's whole path (payload cwd → project root → check → stdout).

let dir: string;
let repo: string;
let dataDir: string;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'engram-hook-tree-'));
  repo = join(dir, 'api');
  mkdirSync(join(repo, '.git'), { recursive: true });
  writeFileSync(join(repo, '.git', 'HEAD'), 'ref: refs/heads/main\n');
  dataDir = join(dir, 'data');
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

async function hook(event: string, fields: Record<string, unknown>): Promise<string> {
  const spool = new HookSpool(join(dir, 'spool'));
  const outcome = await runHook({
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
    openPublisher: () => Promise.resolve({ publish: async () => {}, close: async () => {} }),
    openMemory: () => embeddedHookMemory(dataDir),
  });
  if (outcome.stdout === null) return '';
  return (JSON.parse(outcome.stdout) as { hookSpecificOutput: { additionalContext: string } })
    .hookSpecificOutput.additionalContext;
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
