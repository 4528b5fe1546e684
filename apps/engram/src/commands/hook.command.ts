import { loadConfig } from '@engram/config';
import { CLAUDE_CODE_AGENT_KIND, errorMessage } from '@engram/core';
import { InvalidArgumentError, type Command } from 'commander';
import { isAbsolute, join } from 'node:path';
import { HookSessionStore } from '../hook-session-store';
import { fallbackSpoolDirs, HookSpool } from '../hook-spool';
import { DEFAULT_HOOK_DATA_DIR } from '../hook-socket-protocol';
import { DEFAULT_HOOK_TENANT, resolveHookProject } from './hook-git';
import { embeddedHookMemory, grpcHookMemory } from './hook-memory';
import { distributedHookPublisher, embeddedHookPublisher } from './hook-publishers';
import { flushSpool, runHook } from './hook-run';
import type { HookRun } from './hook-types';

export {
  DEFAULT_HOOK_TENANT,
  GIT_LOG_TIMEOUT_MS,
  GIT_LS_FILES_MAX_BYTES,
  GIT_LS_FILES_TIMEOUT_MS,
  resolveHookProject,
  runGit,
  type HookIdentity,
} from './hook-git';
export {
  embeddedHookMemory,
  embeddedPendingReviews,
  grpcHookMemory,
  hookMemoryOn,
  titled,
  type ContextAnswers,
} from './hook-memory';
export { distributedHookPublisher, embeddedHookPublisher } from './hook-publishers';
export { flushSpool, runHook, SESSION_STATE_MAX_AGE_MS } from './hook-run';
export type { HookMemory, HookOutcome, HookPublisher, HookRun, HookScope } from './hook-types';

// `engram hook` (issue #7, docs/claude-code-hooks.md): one Claude Code hook event on stdin →
// the Engram events on the log, fail-open within a hard time budget, with a local spool for what
// could not be published; and on SessionStart / UserPromptSubmit / PreToolUse(Read, Edit, …)
// the recalled memory printed back as Claude Code's `additionalContext`.
//
// Imports are kept light on purpose (no Kafka client, no retrieval stack at load time): the hook
// is a fresh process for every event, so whatever this module loads is paid on every tool call.
//
// The run itself is in hook-run.ts (its types in hook-types.ts), the project and git in
// hook-git.ts, the publishers in hook-publishers.ts, the memory sources in hook-memory.ts; this
// module is the command.

export const DEFAULT_HOOK_BUDGET_MS = 300;
/** `--flush` has no agent waiting on it. */
export const DEFAULT_FLUSH_BUDGET_MS = 60_000;
/**
 * Memory context (SessionStart, UserPromptSubmit, PreToolUse on files). In-process embedded
 * recall loads the retrieval stack first (~0.4-0.7 s cold on 2 cores, synchronous module loading
 * that no timer can cut short), so it gets its own bound; in distributed mode it is the gRPC
 * deadline of BuildContext / InjectForFile on the running recall server.
 */
export const DEFAULT_CONTEXT_BUDGET_MS = 1_500;
/** The longest wait for stdin's end (Claude Code closes it right after writing the payload). */
export const STDIN_WAIT_MS = 5_000;
const DEFAULT_DATA_DIR = DEFAULT_HOOK_DATA_DIR;

export interface HookCliOptions {
  dataDir: string;
  distributed?: boolean;
  budgetMs?: number;
  contextBudgetMs?: number;
  flush?: boolean;
  context: boolean;
  tenant?: string;
  project?: string;
  agent?: string;
  user?: string;
}

function budgetOption(value: string): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 10 || parsed > 600_000) {
    throw new InvalidArgumentError('must be a whole number of milliseconds in 10..600000');
  }
  return parsed;
}

async function readStdin(deadline: number): Promise<string> {
  if (process.stdin.isTTY) return '';
  const chunks: Buffer[] = [];
  return new Promise((resolve) => {
    const done = () => resolve(Buffer.concat(chunks).toString('utf8'));
    const timer = setTimeout(done, Math.max(0, deadline - Date.now()));
    process.stdin.on('data', (chunk: Buffer) => chunks.push(chunk));
    process.stdin.on('end', () => {
      clearTimeout(timer);
      done();
    });
    process.stdin.on('error', () => {
      clearTimeout(timer);
      done();
    });
  });
}

/** The real stdout: everything else written there goes to stderr while the hook runs. */
let writeStdout: ((text: string, done: () => void) => void) | null = null;

/**
 * Claude Code adds a hook's plain stdout to the model's context (SessionStart,
 * UserPromptSubmit) or parses it as JSON: a library's log line there (the Nest logger kafkajs
 * logs through writes to stdout) would corrupt it. Until `finish`, stdout goes to stderr.
 */
function guardStdout(): void {
  if (writeStdout) return;
  const original = process.stdout.write.bind(process.stdout);
  writeStdout = (text, done) => original(text, done);
  process.stdout.write = (chunk: string | Uint8Array, ...rest: never[]) =>
    process.stderr.write(chunk, ...rest);
}

/** Writes, then exits 0: an abandoned publish or recall must not keep the agent waiting. */
function finish(stdout: string | null, messages: readonly string[], code = 0): void {
  for (const message of messages) process.stderr.write(`${message}\n`);
  const exit = () => process.exit(code);
  if (stdout) {
    (writeStdout ?? ((text, done) => process.stdout.write(text, done)))(`${stdout}\n`, exit);
  } else exit();
}

/**
 * The HookRun of one `engram hook` event with `options`: its spool, fallback spools, session
 * state and project under the data dir, its budgets counted from `started` (epoch ms). Events go
 * through `sources.openPublisher`, context comes from `sources.openMemory` (absent with
 * `--no-context`); `cwd` is where a payload without an absolute cwd runs (default: this
 * process's). The same for the direct path and the hook socket of `engram start`.
 */
export function hookRunFor(
  options: Omit<HookCliOptions, 'flush'>,
  input: string,
  started: number,
  sources: {
    openPublisher: HookRun['openPublisher'];
    openMemory: NonNullable<HookRun['openMemory']>;
    cwd?: string;
  },
): HookRun {
  const spool = new HookSpool(join(options.dataDir, 'spool'));
  const fallbackDirs = fallbackSpoolDirs(options.dataDir);
  const budgetMs = options.budgetMs ?? DEFAULT_HOOK_BUDGET_MS;
  const cwdOf = (cwd: string | undefined) =>
    cwd && isAbsolute(cwd) ? cwd : (sources.cwd ?? process.cwd());
  return {
    input,
    budgetMs: Math.max(0, budgetMs - (Date.now() - started)),
    contextBudgetMs: Math.max(
      0,
      (options.contextBudgetMs ?? DEFAULT_CONTEXT_BUDGET_MS) - (Date.now() - started),
    ),
    spool,
    fallbackSpools: fallbackDirs.map((dir) => new HookSpool(dir)),
    sessions: new HookSessionStore(spool.dir, { fallbackSpoolDirs: fallbackDirs }),
    project: (cwd) => resolveHookProject(cwdOf(cwd), options),
    openPublisher: sources.openPublisher,
    openMemory: options.context ? sources.openMemory : undefined,
  };
}

/** `io.stdin`: the hook's input, already read by the caller (hook-entry.ts); default: stdin. */
export function registerHookCommand(program: Command, io: { stdin?: string } = {}): void {
  program
    .command('hook')
    .description(
      'Claude Code hook bridge: read one hook event (JSON) on stdin, publish it, print memory ' +
        'context; always exits 0 (see docs/claude-code-hooks.md)',
    )
    .option('--data-dir <dir>', 'the data directory (embedded log, spool)', DEFAULT_DATA_DIR)
    .option(
      '--distributed',
      'publish to the configured Kafka and ask the recall gRPC API (ENGRAM_RECALL_GRPC_URL) for context',
    )
    .option(
      '--budget-ms <ms>',
      `hard time budget (default ${DEFAULT_HOOK_BUDGET_MS}; ${DEFAULT_FLUSH_BUDGET_MS} with --flush)`,
      budgetOption,
    )
    .option('--flush', 'publish the spooled events now (no stdin); exit 1 if some remain')
    .option(
      '--context-budget-ms <ms>',
      `time allowed for memory context (default ${DEFAULT_CONTEXT_BUDGET_MS})`,
      budgetOption,
    )
    .option('--no-context', 'do not print memory context back into the session')
    .option('--tenant <id>', `the tenantId of the events (default ${DEFAULT_HOOK_TENANT})`)
    .option('--project <id>', "the projectId (default: the git root's directory name)")
    .option('--agent <id>', `the agentId (default ${CLAUDE_CODE_AGENT_KIND})`)
    .option('--user <id>', 'the userId (default none)')
    .action(async (options: HookCliOptions) => {
      const started = Date.now();
      guardStdout();
      const spool = new HookSpool(join(options.dataDir, 'spool'));
      const fallbackDirs = fallbackSpoolDirs(options.dataDir);
      const fallbackSpools = fallbackDirs.map((dir) => new HookSpool(dir));
      try {
        const config = loadConfig();
        const budgetMs =
          options.budgetMs ?? (options.flush ? DEFAULT_FLUSH_BUDGET_MS : DEFAULT_HOOK_BUDGET_MS);
        const openPublisher = () =>
          options.distributed
            ? distributedHookPublisher(config)
            : embeddedHookPublisher(
                config,
                options.dataDir,
                Math.max(10, Math.floor(budgetMs / 2)),
              );
        if (options.flush) {
          const result = await flushSpool([...fallbackSpools, spool], openPublisher, budgetMs);
          const line = `${result.drained} spooled event(s) published, ${result.left} left`;
          finish(null, [result.error ? `${line}: ${result.error}` : line], result.left > 0 ? 1 : 0);
          return;
        }
        // Claude Code writes the payload and closes stdin at once, but 50 hooks starting together
        // on 2 cores can take longer than the publishing budget to get there: cutting the read
        // at the budget lost whole events ("hook input is not JSON"). Publishing has its budget;
        // reading gets its own, longer bound (within Claude Code's own timeout).
        const input = io.stdin ?? (await readStdin(started + Math.max(budgetMs, STDIN_WAIT_MS)));
        const outcome = await runHook(
          hookRunFor({ ...options, budgetMs }, input, started, {
            openPublisher,
            openMemory: options.distributed
              ? (deadline) => grpcHookMemory(config, deadline)
              : () => embeddedHookMemory(options.dataDir),
          }),
        );
        finish(outcome.stdout, outcome.messages);
      } catch (error) {
        // Fail open: a bad configuration must not break the agent either.
        finish(null, [`engram hook: ${errorMessage(error)}`]);
      }
    });
}
