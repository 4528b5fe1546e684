import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { tsNodeArgs } from '../../../../libs/embedded/src/testing/ts-child';

/** The CLI's entry, from libs/embedded/src/testing (where tsNodeArgs resolves scripts). */
const MAIN = '../../../../apps/engram/src/main.ts';

/**
 * For tests: `engram mcp <args>` as an MCP client starts it — a child process running the CLI's
 * sources (compiled on the fly by SWC, so no build is needed) — connected to the MCP SDK's own
 * Client over stdio. `env` is the child's whole environment (its settings); `dir` a scratch
 * directory (the SWC hook is written there); `cwd` the child's (as an MCP client starts it in
 * the project: the working tree its answers are checked against), by default `dir`.
 */
export async function spawnEngramMcp(
  dir: string,
  args: string[],
  env: Record<string, string>,
  cwd: string = dir,
): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: tsNodeArgs(dir, MAIN, ['mcp', ...args]),
    env,
    cwd,
    stderr: 'pipe',
  });
  const client = new Client({ name: 'engram-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

/** One tool call: its text (the text parts joined) and whether it is an error. */
export async function callTool(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<{ text: string; isError: boolean }> {
  const result = await client.callTool({ name, arguments: args });
  const content = result.content as { type: string; text?: string }[];
  return { text: content.map((c) => c.text ?? '').join('\n'), isError: result.isError === true };
}
