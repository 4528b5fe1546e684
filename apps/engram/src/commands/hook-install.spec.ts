import { installEngramHooks, uninstallEngramHooks, type ClaudeHooksConfig } from '@engram/core';
import { Command } from 'commander';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  changeSettingsFile,
  DIRECT_HOOK_COMMAND,
  engramHookEntries,
  registerHookInstallCommands,
  SettingsFileError,
} from './hook-install';
import { registerHookCommand } from './hook.command';

const ROOT_OF_REPO = join(__dirname, '..', '..', '..', '..');

// A project settings file as people have them: permissions, env, and their own hooks — a
// formatter after edits and a Bash guard (code.claude.com/docs/en/hooks, "Configuration").
const USER_SETTINGS = {
  permissions: { allow: ['Bash(npm run test:*)'], deny: ['Read(./.env)'] },
  env: { NODE_ENV: 'development' },
  hooks: {
    PostToolUse: [
      {
        matcher: 'Edit|Write',
        hooks: [{ type: 'command', command: 'npx prettier --write "$CLAUDE_FILE_PATHS"' }],
      },
    ],
    PreToolUse: [
      { matcher: 'Bash', hooks: [{ type: 'command', command: '.claude/hooks/guard-bash.sh' }] },
    ],
  },
  model: 'sonnet',
};

let dir: string;
let project: string;
let settingsFile: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'engram-hook-install-'));
  project = join(dir, 'webshop');
  mkdirSync(join(project, '.git'), { recursive: true });
  mkdirSync(join(project, 'src'));
  writeFileSync(join(project, '.git', 'HEAD'), 'ref: refs/heads/main\n');
  settingsFile = join(project, '.claude', 'settings.json');
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
  process.exitCode = undefined;
});

function writeSettings(value: unknown): void {
  mkdirSync(join(project, '.claude'), { recursive: true });
  writeFileSync(settingsFile, typeof value === 'string' ? value : JSON.stringify(value, null, 2));
}
type Settings = Record<string, unknown> & { hooks: ClaudeHooksConfig };
const readSettings = () => JSON.parse(readFileSync(settingsFile, 'utf8')) as Settings;

/** Runs `engram hook <args>` through the real CLI wiring; returns stdout. */
async function cli(...args: string[]): Promise<string> {
  const program = new Command().name('engram').exitOverride();
  registerHookCommand(program);
  registerHookInstallCommands(program);
  let out = '';
  const log = vi.spyOn(console, 'log').mockImplementation((text: string) => (out += `${text}\n`));
  const write = vi.spyOn(process.stdout, 'write').mockImplementation((text) => {
    out += String(text);
    return true;
  });
  const error = vi
    .spyOn(console, 'error')
    .mockImplementation((text: string) => (out += `${text}\n`));
  try {
    await program.parseAsync(['node', 'engram', 'hook', ...args]);
  } finally {
    log.mockRestore();
    write.mockRestore();
    error.mockRestore();
  }
  return out;
}

describe('engram hook install', () => {
  it("should add Engram's hooks and keep every key and hook already there", async () => {
    writeSettings(USER_SETTINGS);
    await cli('install', '--project', join(project, 'src'));
    const after = readSettings();
    expect(after.permissions).toEqual(USER_SETTINGS.permissions);
    expect(after.env).toEqual(USER_SETTINGS.env);
    expect(after.model).toBe('sonnet');
    expect(Object.keys(after)).toEqual(['permissions', 'env', 'hooks', 'model']);
    // The user's groups first, in place; ours after them.
    expect(after.hooks.PostToolUse[0]).toEqual(USER_SETTINGS.hooks.PostToolUse[0]);
    expect(after.hooks.PreToolUse[0]).toEqual(USER_SETTINGS.hooks.PreToolUse[0]);
    const ours = engramHookEntries();
    for (const [event, groups] of Object.entries(ours)) {
      expect(after.hooks[event].slice(-groups.length)).toEqual(groups);
    }
    // By default this checkout's bin/engram, run by node directly: no npx start-up per hook.
    expect(after.hooks.PostToolUse[1]).toMatchObject({
      matcher: '*',
      hooks: [{ type: 'command', command: DIRECT_HOOK_COMMAND, async: true }],
    });
    expect(DIRECT_HOOK_COMMAND).toBe(
      `node ${JSON.stringify(join(ROOT_OF_REPO, 'bin', 'engram'))} hook`,
    );
    expect(existsSync(join(ROOT_OF_REPO, 'bin', 'engram'))).toBe(true);
  });

  it('should change nothing on a second install (same bytes, no write)', async () => {
    writeSettings(USER_SETTINGS);
    await cli('install', '--project', project);
    const first = readFileSync(settingsFile, 'utf8');
    const out = await cli('install', '--project', project, '--json');
    expect(readFileSync(settingsFile, 'utf8')).toBe(first);
    const summary = JSON.parse(out) as { changed: boolean; written: boolean; changes: object };
    expect(summary).toMatchObject({ changed: false, written: false });
    expect(new Set(Object.values(summary.changes))).toEqual(new Set(['unchanged']));
  });

  it('should replace an older Engram command in place of adding a second one', async () => {
    writeSettings(USER_SETTINGS);
    await cli('install', '--project', project);
    await cli('install', '--project', project, '--command', 'node /opt/engram/bin/engram hook');
    const after = readSettings();
    const commands = after.hooks.SessionStart.flatMap((group) => group.hooks.map((h) => h.command));
    expect(commands).toEqual(['node /opt/engram/bin/engram hook']);
    expect(after.hooks.PostToolUse[0]).toEqual(USER_SETTINGS.hooks.PostToolUse[0]);
  });

  it('should create .claude/settings.json when there is none', async () => {
    await cli('install', '--project', project);
    expect(readSettings()).toEqual({ hooks: engramHookEntries() });
  });

  it('should refuse a malformed settings file, name it, and leave it alone', async () => {
    const broken = '{ "permissions": { "allow": [ } ';
    writeSettings(broken);
    const out = await cli('install', '--project', project);
    expect(out).toContain(settingsFile);
    expect(out).toMatch(/not valid JSON/);
    expect(process.exitCode).toBe(2);
    expect(readFileSync(settingsFile, 'utf8')).toBe(broken);
  });

  it('should refuse a project directory that does not exist, creating nothing', async () => {
    const missing = join(dir, 'no-such-project');
    const out = await cli('install', '--project', missing);
    expect(out).toContain(`${missing} does not exist (--project)`);
    expect(process.exitCode).toBe(2);
    expect(readdirSync(dir)).toEqual(['webshop']);
  });

  it('should refuse hooks of the wrong shape', () => {
    writeSettings({ hooks: { Stop: { command: 'x' } } });
    expect(() =>
      changeSettingsFile(settingsFile, (s) => installEngramHooks(s, engramHookEntries())),
    ).toThrow(SettingsFileError);
    expect(() =>
      changeSettingsFile(settingsFile, (s) => installEngramHooks(s, engramHookEntries())),
    ).toThrow(/hooks\.Stop" must be an array/);
  });

  it('should print the result and write nothing with --dry-run', async () => {
    writeSettings(USER_SETTINGS);
    const before = readFileSync(settingsFile, 'utf8');
    const out = await cli('install', '--project', project, '--dry-run');
    expect(readFileSync(settingsFile, 'utf8')).toBe(before);
    const printed = JSON.parse(out) as Settings;
    expect(printed.permissions).toEqual(USER_SETTINGS.permissions);
    expect(printed.hooks.SessionEnd).toEqual(engramHookEntries().SessionEnd);
  });

  it('should leave no temporary file and edit a symlinked settings file where it points', async () => {
    const shared = join(dir, 'shared-settings.json');
    writeFileSync(shared, JSON.stringify(USER_SETTINGS));
    mkdirSync(join(project, '.claude'));
    symlinkSync(shared, settingsFile);
    await cli('install', '--project', project);
    expect(readdirSync(join(project, '.claude'))).toEqual(['settings.json']);
    expect(readdirSync(dir).filter((name) => name.includes('.tmp'))).toEqual([]);
    expect((JSON.parse(readFileSync(shared, 'utf8')) as { env: unknown }).env).toEqual(
      USER_SETTINGS.env,
    );
    expect(readSettings().hooks.SessionStart).toEqual(engramHookEntries().SessionStart);
  });
});

describe('engram hook uninstall', () => {
  it("should remove only Engram's hooks and give back the user's file", async () => {
    writeSettings(USER_SETTINGS);
    await cli('install', '--project', project);
    await cli('uninstall', '--project', project);
    expect(readSettings()).toEqual(USER_SETTINGS);
  });

  it('should keep a group that holds the user hook beside ours, and drop the empty hooks key', () => {
    const mixed = {
      hooks: {
        Stop: [
          {
            hooks: [
              { type: 'command', command: 'say done' },
              { type: 'command', command: 'node ~/engram/bin/engram hook --data-dir /tmp/e' },
            ],
          },
        ],
      },
    };
    expect(uninstallEngramHooks(mixed).settings).toEqual({
      hooks: { Stop: [{ hooks: [{ type: 'command', command: 'say done' }] }] },
    });
    const installed = installEngramHooks({ theme: 'dark' }, engramHookEntries()).settings;
    expect(uninstallEngramHooks(installed).settings).toEqual({ theme: 'dark' });
  });
});
