import { loadConfig } from '@engram/config';
import { InvalidArgumentError, type Command } from 'commander';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { resolveHookProject } from '../commands/hook.command';
import { SettingsFileError, writeAtomically } from '../commands/hook-install';
import {
  MCP_CLIENTS,
  mcpConfigPath,
  mergeMcpConfig,
  type McpClient,
  type McpServerEntry,
} from './mcp-install';
import { runEngramMcpStdio } from './mcp-server';

/** The agentId of an MCP client's notes when it names none (`--agent`). */
export const DEFAULT_MCP_AGENT = 'mcp';

interface McpOptions {
  tenant?: string;
  project?: string;
  agent: string;
  user?: string;
  session?: string;
}

interface McpInstallOptions {
  client: McpClient;
  dir?: string;
  tenant?: string;
  project?: string;
  command?: string;
  dryRun?: boolean;
}

/** This checkout's `bin/engram` (from src/ or dist/), what an installed client runs. */
export function engramBin(from = __dirname): string {
  for (let directory = from; ; directory = dirname(directory)) {
    const bin = join(directory, 'bin', 'engram');
    if (existsSync(bin) && existsSync(join(directory, 'package.json'))) return bin;
    if (dirname(directory) === directory) return 'engram';
  }
}

function clientOption(value: string): McpClient {
  if (!(MCP_CLIENTS as readonly string[]).includes(value)) {
    throw new InvalidArgumentError(`must be one of ${MCP_CLIENTS.join(', ')}`);
  }
  return value as McpClient;
}

/** The client's entry: `<bin> mcp --agent <client>`, pinned to the project where the file is. */
export function mcpServerEntry(options: McpInstallOptions, projectId: string): McpServerEntry {
  const config = loadConfig();
  const projectScoped = options.client !== 'codex' || options.project !== undefined;
  return {
    command: options.command ?? engramBin(),
    args: [
      'mcp',
      '--agent',
      options.client,
      ...(projectScoped ? ['--project', projectId] : []),
      ...(options.tenant !== undefined ? ['--tenant', options.tenant] : []),
    ],
    env: {
      ENGRAM_RECALL_GRPC_URL: config.recall.grpcUrl,
      ENGRAM_REVIEW_GRPC_URL: config.distiller.reviewGrpcUrl,
    },
  };
}

function install(options: McpInstallOptions): void {
  const directory = resolve(options.dir ?? process.cwd());
  if (!existsSync(directory)) throw new SettingsFileError(`${directory} does not exist (--dir)`);
  const project = resolveHookProject(directory, { project: options.project });
  const file = mcpConfigPath(options.client, {
    projectRoot: project.projectRoot ?? directory,
    home: homedir(),
  });
  let before = '';
  try {
    before = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new SettingsFileError(`cannot read ${file}: ${(error as Error).message}`);
    }
  }
  const after = mergeMcpConfig(
    options.client,
    file,
    before,
    mcpServerEntry(options, project.projectId),
  );
  if (options.dryRun) {
    process.stdout.write(after);
    console.error(`(dry run: ${file} not written)`);
  } else if (after === before) {
    console.log(`${file}: Engram's MCP server is already there; nothing changed`);
  } else {
    writeAtomically(file, after);
    console.log(`${file}: Engram's MCP server installed for ${options.client}`);
  }
}

/** `engram mcp` (the stdio server) and `engram mcp install --client …`. */
export function registerMcpCommand(program: Command): void {
  program.enablePositionalOptions();
  const mcp = program
    .command('mcp')
    .description(
      'an MCP server on stdio over the running `engram start` (gRPC): recall, context, remember, feedback, review',
    )
    .enablePositionalOptions()
    .option('--tenant <id>', 'the tenant it acts for (default "default", as `engram hook`)')
    .option('--project <id>', "the project (default: the git root's directory name)")
    .option('--agent <id>', 'the agentId of remembered notes', DEFAULT_MCP_AGENT)
    .option('--user <id>', 'the userId sent with feedback')
    .option('--session <id>', 'the session of calls that name none (default: one per process)')
    .action(async (options: McpOptions) => {
      const config = loadConfig();
      const project = resolveHookProject(undefined, options);
      await runEngramMcpStdio(
        {
          tenantId: project.tenantId,
          projectId: project.projectId,
          agentId: options.agent,
          userId: options.user ?? null,
          sessionId: options.session ?? `mcp-${randomUUID()}`,
          ...(project.projectRoot !== null && { projectRoot: project.projectRoot }),
        },
        {
          recallUrl: config.recall.grpcUrl,
          reviewUrl: config.distiller.reviewGrpcUrl,
          ...(config.recall.token !== undefined && { token: config.recall.token }),
        },
      );
    });
  mcp
    .command('install')
    .description("write Engram's MCP server into a client's configuration (merged)")
    .requiredOption('--client <name>', MCP_CLIENTS.join(' | '), clientOption)
    .option('--dir <dir>', 'the project directory (default: the git root of the current one)')
    .option('--project <id>', "the project id (default: the git root's directory name)")
    .option('--tenant <id>', 'the tenant (default: the server’s default)')
    .option('--command <cmd>', "what the client runs (default: this checkout's bin/engram)")
    .option('--dry-run', 'print the resulting file, write nothing')
    .action((options: McpInstallOptions) => {
      try {
        install(options);
      } catch (error) {
        if (!(error instanceof SettingsFileError)) throw error;
        console.error(error.message);
        process.exitCode = 2;
      }
    });
}
