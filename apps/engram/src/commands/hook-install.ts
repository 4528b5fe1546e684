import {
  ClaudeSettingsError,
  installEngramHooks,
  parseClaudeSettings,
  uninstallEngramHooks,
  type ClaudeHooksConfig,
  type SettingsEdit,
} from '@engram/core';
import type { Command } from 'commander';
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { resolveHookProject } from './hook.command';

// `engram hook install` / `engram hook uninstall` (issue #7, docs/claude-code-hooks.md): Engram's
// hooks into a Claude Code settings file, merged — the user's keys and hooks stay as they are —
// and written atomically (temp file + rename), so a crash never leaves half a settings file.

/** The shipped snippet (docs/claude-code-hooks.md): the entries install writes. */
export const ENGRAM_HOOKS_SNIPPET = join(
  __dirname,
  '..',
  '..',
  'hooks',
  'claude-code-settings.json',
);

/** The command the shipped snippet runs (wherever `engram` is on the npm path). */
const SNIPPET_COMMAND = 'npx --no-install engram hook';

/**
 * The command install writes by default: this checkout's `bin/engram` run by node directly.
 * npx's own start-up costs 0.5–1.8 s per hook on a 2-core machine, more than the whole hook
 * through the running service's socket (issue #22); `--command` writes another one (e.g. the
 * snippet's, for a settings file shared across machines).
 */
export const DIRECT_HOOK_COMMAND = `node ${JSON.stringify(
  resolve(__dirname, '..', '..', '..', '..', 'bin', 'engram'),
)} hook`;

/** Engram's hook entries, with `command` in place of the snippet's. */
export function engramHookEntries(command = DIRECT_HOOK_COMMAND): ClaudeHooksConfig {
  const snippet = JSON.parse(readFileSync(ENGRAM_HOOKS_SNIPPET, 'utf8')) as {
    hooks: ClaudeHooksConfig;
  };
  for (const groups of Object.values(snippet.hooks)) {
    for (const group of groups) {
      for (const handler of group.hooks) handler.command = command;
    }
  }
  return snippet.hooks;
}

/** Where the settings live: `<project>/.claude/settings.json` or `~/.claude/settings.json`. */
export function settingsPath(options: { project?: string; user?: boolean }): string {
  if (options.user) return join(homedir(), '.claude', 'settings.json');
  const directory = resolve(options.project ?? process.cwd());
  if (!existsSync(directory)) {
    throw new SettingsFileError(`${directory} does not exist (--project)`);
  }
  // The project root is the git top level, as the hook itself resolves it.
  const root = resolveHookProject(directory).projectRoot ?? directory;
  return join(root, '.claude', 'settings.json');
}

/** A settings file that cannot be edited safely; the message names the file. */
export class SettingsFileError extends Error {}

export interface SettingsChange extends SettingsEdit {
  file: string;
  /** What the file holds after the change, as written (or as it would be, with dry run). */
  text: string;
  written: boolean;
}

/**
 * Reads `file`, applies `change` and writes the result atomically unless nothing changed or
 * `dryRun`. A file that is not Claude Code settings is an error naming it, never overwritten.
 */
export function changeSettingsFile(
  file: string,
  change: (settings: Record<string, unknown>) => SettingsEdit,
  dryRun = false,
): SettingsChange {
  const target = realTarget(file);
  let before = '';
  try {
    before = readFileSync(target, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new SettingsFileError(`cannot read ${file}: ${(error as Error).message}`);
    }
  }
  let edit: SettingsEdit;
  try {
    edit = change(parseClaudeSettings(before));
  } catch (error) {
    if (!(error instanceof ClaudeSettingsError)) throw error;
    throw new SettingsFileError(`${file} ${error.message}; it was left unchanged`);
  }
  const text = edit.changed ? `${JSON.stringify(edit.settings, null, 2)}\n` : before;
  const written = edit.changed && !dryRun;
  if (written) writeAtomically(target, text);
  return { ...edit, file, text, written };
}

/** A symlinked settings file is edited where it points (a rename would replace the link). */
function realTarget(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    return file;
  }
}

/** Temp file beside the target, fsync, rename: readers see the old file or the new one. */
export function writeAtomically(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true });
  const temp = `${file}.engram-${process.pid}.tmp`;
  try {
    const fd = openSync(temp, 'w', 0o644);
    try {
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, file);
  } catch (error) {
    rmSync(temp, { force: true });
    throw new SettingsFileError(`cannot write ${file}: ${(error as Error).message}`);
  }
}

interface InstallCliOptions {
  project?: string;
  user?: boolean;
  dryRun?: boolean;
  json?: boolean;
  command?: string;
}

function report(result: SettingsChange, options: InstallCliOptions, verb: string): void {
  if (options.dryRun && !options.json) {
    process.stdout.write(result.text);
    return;
  }
  if (options.json) {
    const { file, changes, changed, written } = result;
    console.log(JSON.stringify({ file, changed, written, changes }));
    return;
  }
  const touched = Object.entries(result.changes).filter(([, change]) => change !== 'unchanged');
  if (touched.length === 0) {
    console.log(
      `${result.file}: Engram's hooks are ${verb === 'installed' ? 'already' : 'not'} there; nothing changed`,
    );
    return;
  }
  console.log(
    `${result.file}: Engram's hooks ${verb} (${touched.map(([e, c]) => `${e} ${c}`).join(', ')})`,
  );
}

function run(action: () => void): void {
  try {
    action();
  } catch (error) {
    if (!(error instanceof SettingsFileError)) throw error;
    console.error(error.message);
    process.exitCode = 2;
  }
}

/** `engram hook install` and `engram hook uninstall`, under the `hook` command. */
export function registerHookInstallCommands(program: Command): void {
  const hook = program.commands.find((command) => command.name() === 'hook');
  if (!hook) throw new Error('register the hook command before its install subcommands');
  // `--project` means a directory here and a project id to `engram hook` itself: the hook's
  // options are read before `install` only.
  program.enablePositionalOptions();
  hook.enablePositionalOptions();
  const common = (command: Command) =>
    command
      .option(
        '--project <dir>',
        'the project whose .claude/settings.json to edit (default: the git root of the current directory)',
      )
      .option('--user', 'edit ~/.claude/settings.json (every project) instead')
      .option('--dry-run', 'print the resulting settings file, write nothing')
      .option('--json', 'print what changed as one JSON object');
  common(
    hook
      .command('install')
      .description(
        "write Engram's hooks into Claude Code's settings (merged: other keys and hooks are kept; a second install changes nothing)",
      ),
  )
    .option(
      '--command <cmd>',
      `the command each hook runs (default: this checkout's bin/engram run by node; "${SNIPPET_COMMAND}" for a shared settings file)`,
    )
    .action((options: InstallCliOptions) =>
      run(() => {
        const ours = engramHookEntries(options.command);
        const result = changeSettingsFile(
          settingsPath(options),
          (settings) => installEngramHooks(settings, ours),
          options.dryRun,
        );
        report(result, options, 'installed');
      }),
    );
  common(
    hook
      .command('uninstall')
      .description("remove Engram's hooks (only those) from Claude Code's settings"),
  ).action((options: InstallCliOptions) =>
    run(() => {
      const result = changeSettingsFile(
        settingsPath(options),
        uninstallEngramHooks,
        options.dryRun,
      );
      report(result, options, 'removed');
    }),
  );
}
