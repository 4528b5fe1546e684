import { resetConfigForTests } from '@engram/config';
import { Command } from 'commander';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SettingsFileError } from '../commands/hook-install';
import { codexTable, mergeCodexToml, mergeJsonMcpConfig, type McpServerEntry } from './mcp-install';
import { engramBin, registerMcpCommand } from './mcp.command';

// `engram mcp install --client claude-code|codex|cursor [--dry-run]` (issue #22): Engram's entry
// merged into each client's MCP configuration, other servers kept; JSON that parses, and Codex's
// TOML table as exact text (no TOML parser is installed).

const ENTRY: McpServerEntry = {
  command: '/opt/engram/bin/engram',
  args: ['mcp', '--agent', 'codex'],
  env: { ENGRAM_RECALL_GRPC_URL: '127.0.0.1:50051', ENGRAM_REVIEW_GRPC_URL: '127.0.0.1:50052' },
};
const CODEX_TABLE = [
  '[mcp_servers.engram]',
  'command = "/opt/engram/bin/engram"',
  'args = ["mcp", "--agent", "codex"]',
  'env = { ENGRAM_RECALL_GRPC_URL = "127.0.0.1:50051", ENGRAM_REVIEW_GRPC_URL = "127.0.0.1:50052" }',
  '',
].join('\n');

describe('mergeJsonMcpConfig (Claude Code .mcp.json, Cursor .cursor/mcp.json)', () => {
  it('should add Engram beside the servers and keys already there', () => {
    const before = JSON.stringify({
      mcpServers: { github: { command: 'gh-mcp', args: [] } },
      other: { kept: true },
    });
    expect(JSON.parse(mergeJsonMcpConfig('f.json', before, ENTRY))).toEqual({
      mcpServers: { github: { command: 'gh-mcp', args: [] }, engram: ENTRY },
      other: { kept: true },
    });
  });

  it('should write a new file, replace an old Engram entry, and refuse what is not JSON', () => {
    expect(JSON.parse(mergeJsonMcpConfig('f.json', '', ENTRY))).toEqual({
      mcpServers: { engram: ENTRY },
    });
    const old = JSON.stringify({ mcpServers: { engram: { command: 'old' } } });
    expect(JSON.parse(mergeJsonMcpConfig('f.json', old, ENTRY))).toEqual({
      mcpServers: { engram: ENTRY },
    });
    expect(() => mergeJsonMcpConfig('f.json', '{"mcpServers": [', ENTRY)).toThrow(
      /^f\.json is not valid JSON/,
    );
    expect(() => mergeJsonMcpConfig('f.json', '{"mcpServers": []}', ENTRY)).toThrow(
      SettingsFileError,
    );
  });
});

describe('mergeCodexToml (~/.codex/config.toml)', () => {
  it('should render the table, escaping what TOML needs', () => {
    expect(codexTable(ENTRY)).toBe(CODEX_TABLE);
    expect(codexTable({ command: 'C:\\e "x"', args: [], env: { 'A.B': 'v' } })).toBe(
      '[mcp_servers.engram]\ncommand = "C:\\\\e \\"x\\""\nargs = []\nenv = { "A.B" = "v" }\n',
    );
  });

  it('should append the table after the other settings and servers', () => {
    const before = 'model = "o4"\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\n';
    expect(mergeCodexToml('c.toml', before, ENTRY)).toBe(`${before}\n${CODEX_TABLE}`);
    expect(mergeCodexToml('c.toml', '', ENTRY)).toBe(CODEX_TABLE);
  });

  it('should replace an old Engram table and its subtables where they stood', () => {
    const before = [
      'model = "o4"',
      '',
      '[mcp_servers.engram]',
      'command = "old"',
      '',
      '[mcp_servers.engram.env]',
      'X = "1"',
      '',
      '[mcp_servers.docs]',
      'command = "docs-mcp"',
      '',
    ].join('\n');
    expect(mergeCodexToml('c.toml', before, ENTRY)).toBe(
      `model = "o4"\n\n${CODEX_TABLE}\n[mcp_servers.docs]\ncommand = "docs-mcp"\n`,
    );
    // A second install changes nothing.
    const once = mergeCodexToml('c.toml', before, ENTRY);
    expect(mergeCodexToml('c.toml', once, ENTRY)).toBe(once);
  });

  it('should refuse an Engram server written as keys, which a table would duplicate', () => {
    for (const before of [
      '[mcp_servers]\nengram = { command = "x" }\n',
      'mcp_servers.engram.command = "x"\n',
    ]) {
      expect(() => mergeCodexToml('c.toml', before, ENTRY)).toThrow(/edit it by hand/);
    }
  });
});

describe('engram mcp install', () => {
  let dir: string;
  let project: string;
  let out: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'engram-mcp-install-'));
    project = join(dir, 'webshop');
    mkdirSync(join(project, '.git'), { recursive: true });
    vi.stubEnv('HOME', join(dir, 'home'));
    vi.stubEnv('ENGRAM_RECALL_GRPC_URL', '127.0.0.1:7001');
    resetConfigForTests();
    out = '';
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      out += String(chunk);
      return true;
    });
    vi.spyOn(console, 'log').mockImplementation(() => undefined);
    vi.spyOn(console, 'error').mockImplementation(() => undefined);
  });

  afterEach(() => {
    vi.restoreAllMocks();
    vi.unstubAllEnvs();
    resetConfigForTests();
    rmSync(dir, { recursive: true, force: true });
  });

  async function install(...args: string[]): Promise<void> {
    const program = new Command().exitOverride();
    registerMcpCommand(program);
    await program.parseAsync(['mcp', 'install', '--dir', project, ...args], { from: 'user' });
  }

  it('should print each client’s configuration with --dry-run and write nothing', async () => {
    for (const client of ['claude-code', 'cursor']) {
      out = '';
      await install('--client', client, '--dry-run');
      expect(JSON.parse(out)).toEqual({
        mcpServers: {
          engram: {
            command: engramBin(),
            args: ['mcp', '--agent', client, '--project', 'webshop'],
            env: {
              ENGRAM_RECALL_GRPC_URL: '127.0.0.1:7001',
              ENGRAM_REVIEW_GRPC_URL: '127.0.0.1:50052',
            },
          },
        },
      });
    }
    out = '';
    await install('--client', 'codex', '--dry-run', '--command', '/opt/engram/bin/engram');
    expect(out).toBe(CODEX_TABLE.replace('127.0.0.1:50051', '127.0.0.1:7001'));
    expect(engramBin()).toMatch(/\/bin\/engram$/);
    expect(() => readFileSync(join(project, '.mcp.json'))).toThrow(/ENOENT/);
  });

  it('should merge into the files the clients read, keeping their other servers', async () => {
    const cursorFile = join(project, '.cursor', 'mcp.json');
    mkdirSync(join(project, '.cursor'));
    writeFileSync(cursorFile, JSON.stringify({ mcpServers: { docs: { command: 'd' } } }));
    await install('--client', 'cursor', '--tenant', 'acme');
    const cursor = JSON.parse(readFileSync(cursorFile, 'utf8')) as {
      mcpServers: Record<string, { args?: string[] }>;
    };
    expect(Object.keys(cursor.mcpServers)).toEqual(['docs', 'engram']);
    expect(cursor.mcpServers.engram.args).toEqual([
      'mcp',
      '--agent',
      'cursor',
      '--project',
      'webshop',
      '--tenant',
      'acme',
    ]);
    await install('--client', 'claude-code');
    expect(JSON.parse(readFileSync(join(project, '.mcp.json'), 'utf8'))).toHaveProperty(
      'mcpServers.engram.command',
      engramBin(),
    );
    await install('--client', 'codex');
    expect(readFileSync(join(dir, 'home', '.codex', 'config.toml'), 'utf8')).toMatch(
      /^\[mcp_servers\.engram\]\ncommand = ".*\/bin\/engram"\nargs = \["mcp", "--agent", "codex"\]\n/,
    );
  });

  it('should leave a file that is not JSON alone and exit 2', async () => {
    writeFileSync(join(project, '.mcp.json'), '{ not json');
    await install('--client', 'claude-code');
    expect(readFileSync(join(project, '.mcp.json'), 'utf8')).toBe('{ not json');
    expect(process.exitCode).toBe(2);
    process.exitCode = 0;
  });
});
