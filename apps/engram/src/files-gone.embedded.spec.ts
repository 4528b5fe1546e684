// Issue #20, a client's working-tree check telling the service, on embedded Engram (`engram
// start`'s services on a data directory; `engram hook`'s direct path into the same directory): a
// memory about src/x.ts is injected while the file is there; once src/x.ts is deleted from a real
// git work tree, the hook hides the memory and publishes a fresh FileManifest, and the observer's
// sweep marks the stored memory stale for everyone — InjectForFile on the service leaves it out,
// Recall shows it with the stale prefix.
import { parseConfig } from '@engram/config';
import type { Memory, Typed } from '@engram/contracts';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileGotcha } from '@engram/app-retrieval/testing';
import {
  embeddedHookMemory,
  embeddedHookPublisher,
  hookRunFor,
  runHook,
  type HookOutcome,
} from './commands/hook.command';
import { startLexicalEmbedded, type LexicalEmbedded } from './testing/embedded-lexical';
import { pollUntil as until } from './testing/poll-until';

const SCOPE = { tenantId: 'acme', projectId: 'api' };
const X_FILE = 'src/x.ts';
const Y_FILE = 'src/y.ts';
const SESSION = '5e55104e-0000-4000-8000-0000000000f1';
const config = parseConfig({});
const X_MEMORY: Memory = fileGotcha(
  SCOPE,
  '6c1e7f3a-0000-4000-8000-0000000000f1',
  'The x parser must keep trailing commas or the config loader rejects the file',
  X_FILE,
  Date.UTC(2026, 0, 5, 9),
);

describe('a hook that finds a memory’s files gone tells the service, embedded', () => {
  let dir: string;
  let repo: string;
  let engram: LexicalEmbedded;
  /** Every event the hooks published, in order. */
  const published: Typed[] = [];

  const git = (...args: string[]) =>
    execFileSync('git', ['-C', repo, '-c', 'user.name=t', '-c', 'user.email=t@t', ...args], {
      stdio: 'ignore',
    });
  const create = (path: string) => {
    mkdirSync(dirname(join(repo, path)), { recursive: true });
    writeFileSync(join(repo, path), 'export {};\n');
  };
  /** `engram hook`'s direct embedded path (the CLI's hookRunFor and publishers) for a Read. */
  const readX = async (): Promise<{ context: string; outcome: HookOutcome }> => {
    const input = JSON.stringify({
      session_id: SESSION,
      transcript_path: `/home/dev/.claude/projects/api/${SESSION}.jsonl`,
      cwd: repo,
      hook_event_name: 'PreToolUse',
      tool_name: 'Read',
      tool_use_id: `toolu_${published.length}_${Date.now()}`,
      tool_input: { file_path: join(repo, X_FILE) },
    });
    const outcome = await runHook(
      hookRunFor(
        {
          dataDir: engram.dataDir,
          context: true,
          budgetMs: 5_000,
          contextBudgetMs: 20_000,
          tenant: SCOPE.tenantId,
          project: SCOPE.projectId,
        },
        input,
        Date.now(),
        {
          openPublisher: async () => {
            const publisher = await embeddedHookPublisher(config, engram.dataDir, 2_500);
            return {
              publish: async (events) => {
                await publisher.publish(events);
                published.push(...events);
              },
              close: () => publisher.close(),
            };
          },
          openMemory: () => embeddedHookMemory(engram.dataDir),
        },
      ),
    );
    const context =
      outcome.stdout === null
        ? ''
        : (JSON.parse(outcome.stdout) as { hookSpecificOutput: { additionalContext: string } })
            .hookSpecificOutput.additionalContext;
    return { context, outcome };
  };
  const manifests = () =>
    published.filter((event): event is Typed<'FileManifest'> => event.type === 'FileManifest');
  const inject = (filePath: string) => engram.injected(SCOPE, filePath);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'engram-files-gone-'));
    repo = join(dir, 'api');
    mkdirSync(repo);
    git('init', '-q');
    create(X_FILE);
    create(Y_FILE);
    git('add', '.');
    git('commit', '-q', '-m', 'init');
    engram = await startLexicalEmbedded('files-gone');
    // The memory about src/x.ts, as the observer or distiller would have written it.
    await engram.publish([{ type: 'Memory', ...X_MEMORY }]);
    await until(
      () => inject(X_FILE),
      (ids) => ids.length === 1,
    );
  }, 60_000);

  afterAll(async () => {
    await engram?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('should inject the memory while src/x.ts is there, and publish no manifest', async () => {
    const { context } = await readX();
    expect(context).toContain(X_MEMORY.content);
    expect(manifests()).toEqual([]);
  }, 30_000);

  it('should hide it once src/x.ts is deleted, publish one manifest, and the service stales it', async () => {
    rmSync(join(repo, X_FILE));
    const { context, outcome } = await readX();
    expect(context).toBe('');
    expect(outcome.spooled).toBe(0);
    expect(manifests()).toHaveLength(1);
    const [manifest] = manifests();
    expect(manifest).toMatchObject({ ...SCOPE, sessionId: SESSION, files: [Y_FILE] });

    // The services catch up: the stored memory is stale from the manifest's time.
    await until(
      () => inject(X_FILE),
      (ids) => ids.length === 0,
    );
    const stale = (await engram.recalled(SCOPE, 'x parser trailing commas config loader')).find(
      (m) => m.memory.memoryId === X_MEMORY.memoryId,
    )!;
    expect(stale.memory.staleAt).toBe(manifest.timestamp);
    expect(stale.memory.relatedFiles).toEqual([X_FILE]);
    expect(stale.stale).toBe(true);
    expect(stale.content).toBe(`[STALE — file no longer exists] ${X_MEMORY.content}`);
    expect(engram.services.observer.stage.counters.manifestsSwept).toBe(1);

    // Within the interval, the next hook that hides it publishes nothing more.
    expect((await readX()).context).toBe('');
    expect(manifests()).toHaveLength(1);
  }, 60_000);
});
