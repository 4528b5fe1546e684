import { join } from 'node:path';
import { SettingsFileError } from '../commands/hook-install';
import { MCP_SERVER_NAME } from './mcp-server';

// `engram mcp install --client …`: Engram's entry in an MCP client's configuration, merged into
// the file the client reads (every other server and key kept):
// - Claude Code: `<project>/.mcp.json` (project scope, shared), `{"mcpServers": {name: entry}}`;
// - Cursor: `<project>/.cursor/mcp.json`, the same shape;
// - Codex: `~/.codex/config.toml`, a `[mcp_servers.<name>]` table with command, args and env.
// The token is never written: the server reads ENGRAM_GRPC_TOKEN from the environment the client
// starts it in. Pure functions of the file's text; the command reads and writes.

export const MCP_CLIENTS = ['claude-code', 'codex', 'cursor'] as const;
export type McpClient = (typeof MCP_CLIENTS)[number];

/** How the client starts `engram mcp`. */
export interface McpServerEntry {
  command: string;
  args: string[];
  env: Record<string, string>;
}

/** The client's configuration file: the project's (Claude Code, Cursor) or the user's (Codex). */
export function mcpConfigPath(client: McpClient, where: { projectRoot: string; home: string }) {
  switch (client) {
    case 'claude-code':
      return join(where.projectRoot, '.mcp.json');
    case 'cursor':
      return join(where.projectRoot, '.cursor', 'mcp.json');
    case 'codex':
      return join(where.home, '.codex', 'config.toml');
  }
}

/** Claude Code's and Cursor's `mcpServers` JSON with Engram's entry set; other keys kept. */
export function mergeJsonMcpConfig(file: string, before: string, entry: McpServerEntry): string {
  let config: unknown = {};
  if (before.trim() !== '') {
    try {
      config = JSON.parse(before);
    } catch (error) {
      throw new SettingsFileError(`${file} is not valid JSON (${(error as Error).message})`);
    }
  }
  if (typeof config !== 'object' || config === null || Array.isArray(config)) {
    throw new SettingsFileError(`${file} is not a JSON object`);
  }
  const servers: unknown = (config as Record<string, unknown>).mcpServers ?? {};
  if (typeof servers !== 'object' || servers === null || Array.isArray(servers)) {
    throw new SettingsFileError(`${file}: "mcpServers" is not an object`);
  }
  const merged = { ...config, mcpServers: { ...servers, [MCP_SERVER_NAME]: entry } };
  return `${JSON.stringify(merged, null, 2)}\n`;
}

/** A TOML basic string (JSON's escapes are TOML's, DEL aside). */
function tomlString(value: string): string {
  return JSON.stringify(value).replace(/\x7f/g, '\\u007F');
}

function tomlKey(key: string): string {
  return /^[A-Za-z0-9_-]+$/.test(key) ? key : tomlString(key);
}

/** Engram's `[mcp_servers.<name>]` table for Codex. */
export function codexTable(entry: McpServerEntry): string {
  const env = Object.entries(entry.env)
    .map(([key, value]) => `${tomlKey(key)} = ${tomlString(value)}`)
    .join(', ');
  return [
    `[mcp_servers.${MCP_SERVER_NAME}]`,
    `command = ${tomlString(entry.command)}`,
    `args = [${entry.args.map(tomlString).join(', ')}]`,
    `env = { ${env} }`,
    '',
  ].join('\n');
}

const HEADER = /^\s*\[\[?\s*([^\]]*?)\s*\]\]?\s*(#.*)?$/;

/** `mcp_servers.engram`, `mcp_servers."engram"`, and their subtables `….env`. */
function isEngramTable(name: string): boolean {
  const parts = name.split('.').map((part) => part.trim().replace(/^"(.*)"$/, '$1'));
  return parts[0] === 'mcp_servers' && parts[1] === MCP_SERVER_NAME;
}

/**
 * Codex's config.toml with Engram's table in place of the old one (where it stood) or appended;
 * every other line kept as it was. An Engram entry written another way (a dotted key, or a key of
 * `[mcp_servers]`) is an error: merging it here could give the file a duplicate key.
 */
export function mergeCodexToml(file: string, before: string, entry: McpServerEntry): string {
  const lines = before === '' ? [] : before.replace(/\n$/, '').split('\n');
  const kept: string[] = [];
  let table = '';
  let insertAt = -1;
  for (const line of lines) {
    const header = HEADER.exec(line);
    if (header) table = header[1];
    const dotted = new RegExp(`^\\s*"?${MCP_SERVER_NAME}"?\\s*[.=]`);
    const rootDotted = new RegExp(`^\\s*mcp_servers\\s*\\.\\s*"?${MCP_SERVER_NAME}"?\\s*[.=]`);
    if (
      !header &&
      ((table === 'mcp_servers' && dotted.test(line)) || (table === '' && rootDotted.test(line)))
    ) {
      throw new SettingsFileError(
        `${file} defines mcp_servers.${MCP_SERVER_NAME} as keys, not as a [mcp_servers.${MCP_SERVER_NAME}] table: edit it by hand; it was left unchanged`,
      );
    }
    if (isEngramTable(table)) {
      if (insertAt === -1) insertAt = kept.length;
      continue;
    }
    kept.push(line);
  }
  const block = codexTable(entry).replace(/\n$/, '').split('\n');
  if (insertAt === -1) {
    const spacer = kept.length > 0 && kept[kept.length - 1].trim() !== '' ? [''] : [];
    return `${[...kept, ...spacer, ...block].join('\n')}\n`;
  }
  const after = kept.slice(insertAt);
  const gap = after.length > 0 && after[0].trim() !== '' ? [''] : [];
  return `${[...kept.slice(0, insertAt), ...block, ...gap, ...after].join('\n')}\n`;
}

/** The file's text with Engram's entry merged in, by the client's format. */
export function mergeMcpConfig(
  client: McpClient,
  file: string,
  before: string,
  entry: McpServerEntry,
): string {
  return client === 'codex'
    ? mergeCodexToml(file, before, entry)
    : mergeJsonMcpConfig(file, before, entry);
}
