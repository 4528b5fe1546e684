import { loadConfig } from '@engram/config';
import {
  coCommitBatches,
  DEFAULT_CO_COMMIT_SETTINGS,
  DownstreamUnavailableError,
  emptyCoCommitStats,
  errorMessage,
  gitLogArgs,
  observerSettings,
  parseGitLog,
  type CoAccessReader,
  type CoCommitStats,
  type GitCommit,
  type ObserverGraphWriter,
} from '@engram/core';
import { SqliteObserverGraph } from '@engram/embedded';
import { createNeo4jDriver, ensureGraphSchema, Neo4jObserverGraphWriter } from '@engram/neo4j';
import type { Command } from 'commander';
import { execFile } from 'node:child_process';
import { basename } from 'node:path';
import { promisify } from 'node:util';
import { progressBar, type Progress } from '../progress';
import { positiveInteger } from './command-options';
import { DEFAULT_DATA_DIR } from './replay.command';

const run = promisify(execFile);

/** Names the tenant when neither --tenant nor the graph does (a cold start of a new project). */
export const DEFAULT_BOOTSTRAP_TENANT = 'default';

export interface BootstrapOptions {
  repo: string;
  project?: string;
  tenant?: string;
  maxCommits: number;
  since?: string;
  maxFilesPerCommit: number;
  /** Rows per graph batch (whole commits). */
  batchRows?: number;
}

/** What `engram bootstrap --json` prints (one JSON object). */
export interface BootstrapReport extends CoCommitStats {
  repo: string;
  project: string;
  tenant: string;
  /** flag: --tenant; graph: the only tenant with this project; default: neither. */
  tenantSource: 'flag' | 'graph' | 'default';
  mode: 'embedded' | 'distributed';
  /** Distinct files touched by the commits written. */
  files: number;
  seconds: number;
}

/** The repository's top level; clear errors for what people get wrong. */
export async function gitTopLevel(repo: string): Promise<string> {
  try {
    const { stdout } = await run('git', ['-C', repo, 'rev-parse', '--show-toplevel']);
    return stdout.trim();
  } catch (error) {
    throw gitError(error, repo);
  }
}

/** The bounded history, newest first (`git log` order). An empty repository has none. */
export async function readGitLog(
  topLevel: string,
  options: Pick<BootstrapOptions, 'maxCommits' | 'since'>,
): Promise<GitCommit[]> {
  try {
    const { stdout } = await run('git', ['-C', topLevel, ...gitLogArgs(options)], {
      // 2,000 commits of up to a few hundred paths each: far below this.
      maxBuffer: 1 << 30,
      encoding: 'utf8',
    });
    return parseGitLog(stdout);
  } catch (error) {
    if (/does not have any commits yet/.test(stderrOf(error))) return [];
    throw gitError(error, topLevel);
  }
}

function stderrOf(error: unknown): string {
  const stderr = (error as { stderr?: unknown }).stderr;
  return typeof stderr === 'string' ? stderr : '';
}

function gitError(error: unknown, repo: string): Error {
  const code = (error as { code?: unknown }).code;
  // spawn's ENOENT is the git binary itself (a missing --repo is git's own error, exit 128).
  if (code === 'ENOENT') {
    return new Error('git is not installed (no `git` on PATH): bootstrap reads `git log`', {
      cause: error,
    });
  }
  const stderr = stderrOf(error).trim();
  if (/not a git repository/i.test(stderr)) {
    return new Error(`${repo} is not a git repository (--repo)`, { cause: error });
  }
  if (/cannot change to|No such file or directory/i.test(stderr)) {
    return new Error(`${repo} does not exist (--repo)`, { cause: error });
  }
  return new Error(`git failed on ${repo}: ${stderr || errorMessage(error)}`, { cause: error });
}

export type BootstrapProgress = (commitsDone: number, commitsTotal: number) => void;

/**
 * Seeds the graph from the repository's co-commits through the observer's own port: a re-run
 * writes the same facts (nothing changes), and later sessions add to the same weights.
 */
export async function bootstrapGraph(
  store: ObserverGraphWriter & CoAccessReader,
  options: BootstrapOptions,
  mode: BootstrapReport['mode'],
  progress: BootstrapProgress = () => undefined,
): Promise<BootstrapReport> {
  const started = process.hrtime.bigint();
  const repo = await gitTopLevel(options.repo);
  const project = options.project ?? basename(repo);
  const { tenant, tenantSource } = await resolveTenant(store, project, options.tenant);
  const commits = await readGitLog(repo, options);
  const settings = {
    ...DEFAULT_CO_COMMIT_SETTINGS,
    moduleDepth: observerSettings().moduleDepth,
    maxFilesPerCommit: options.maxFilesPerCommit,
    maxRowsPerBatch: options.batchRows ?? DEFAULT_CO_COMMIT_SETTINGS.maxRowsPerBatch,
  };
  const stats = emptyCoCommitStats();
  const files = new Set<string>();
  let done = 0;
  const scope = { tenantId: tenant, projectId: project };
  for (const { batch, commits: consumed } of coCommitBatches(scope, commits, settings, stats)) {
    await store.write(batch);
    for (const touch of batch.touches) files.add(touch.path);
    done += consumed;
    progress(done, commits.length);
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return {
    repo,
    project,
    tenant,
    tenantSource,
    mode,
    ...stats,
    files: files.size,
    seconds: Number(seconds.toFixed(3)),
  };
}

async function resolveTenant(
  graph: CoAccessReader,
  project: string,
  flag: string | undefined,
): Promise<Pick<BootstrapReport, 'tenant' | 'tenantSource'>> {
  if (flag !== undefined) return { tenant: flag, tenantSource: 'flag' };
  const tenants = await graph.tenantsOfProject(project);
  if (tenants.length > 1) {
    throw new Error(
      `project ${project} exists for several tenants (${tenants.join(', ')}): pass --tenant`,
    );
  }
  return tenants.length === 1
    ? { tenant: tenants[0], tenantSource: 'graph' }
    : { tenant: DEFAULT_BOOTSTRAP_TENANT, tenantSource: 'default' };
}

/** The report for people. */
export function formatBootstrap(report: BootstrapReport): string {
  const skipped = report.skippedTooManyFiles + report.skippedNoFiles;
  const lines = [
    `bootstrapped ${report.project} (tenant ${report.tenant}, ${report.mode}) from ${report.repo}:`,
    `  ${report.commitsRead} commits read, ${report.commitsUsed} written as sessions, ${skipped} skipped ` +
      `(${report.skippedTooManyFiles} bulk, ${report.skippedNoFiles} without files)`,
    `  ${report.files} files, ${report.touches} touches, ${report.pairs} co-commit pairs ` +
      `in ${report.batches} batches, ${report.seconds} s`,
  ];
  if (report.tenantSource === 'default') {
    lines.push(
      `  note: no tenant has project ${report.project} yet, so it went to tenant ` +
        `${report.tenant}; pass --tenant to match the tenantId your agents' events carry`,
    );
  }
  return lines.join('\n');
}

type BootstrapCliOptions = BootstrapOptions & {
  json?: boolean;
  dataDir: string;
  distributed?: boolean;
};

/** The commits written, as a bar on stderr (only on a terminal: see progressBar). */
function barProgress(bar: Progress): BootstrapProgress {
  let shown = 0;
  return (done, total) => {
    bar.total(total);
    bar.advance(done - shown);
    shown = done;
  };
}

export function registerBootstrapCommand(program: Command): void {
  program
    .command('bootstrap')
    .description("seed the observer's co-access graph from a repository's git co-commits")
    .requiredOption('--repo <path>', 'the git repository (any directory inside it)')
    .option('--project <id>', 'the project id (default: the repository directory name)')
    .option('--tenant <id>', 'the tenant (default: the only tenant with this project)')
    .option('--max-commits <n>', 'the most recent commits to read', positiveInteger, 2000)
    .option('--since <date>', 'only commits after this date (as git log --since)')
    .option(
      '--max-files-per-commit <n>',
      'skip bulk commits touching more files (formatting, vendoring)',
      positiveInteger,
      DEFAULT_CO_COMMIT_SETTINGS.maxFilesPerCommit,
    )
    .option('--data-dir <dir>', 'embedded mode: the data directory', DEFAULT_DATA_DIR)
    .option('--distributed', 'write to the configured Neo4j')
    .option('--json', 'print one JSON object')
    .action(async (options: BootstrapCliOptions) => {
      const report = options.distributed ? await toNeo4j(options) : await toEmbedded(options);
      console.log(options.json ? JSON.stringify(report) : formatBootstrap(report));
    });
}

async function toEmbedded(options: BootstrapCliOptions): Promise<BootstrapReport> {
  // Creates graph.db when missing: bootstrap is meant to run before the first session.
  const graph = SqliteObserverGraph.open({ dataDir: options.dataDir, rule: observerSettings() });
  const bar = progressBar('bootstrap', { unit: 'commits', enabled: options.json !== true });
  try {
    return await bootstrapGraph(graph, options, 'embedded', barProgress(bar));
  } finally {
    bar.stop();
    graph.close();
  }
}

async function toNeo4j(options: BootstrapCliOptions): Promise<BootstrapReport> {
  const config = loadConfig();
  const driver = createNeo4jDriver(config.neo4j);
  const bar = progressBar('bootstrap', { unit: 'commits', enabled: options.json !== true });
  try {
    // Constraints first: the MERGEs rely on them, and the observer may never have run here.
    await ensureGraphSchema(driver);
    const writer = new Neo4jObserverGraphWriter(driver, observerSettings());
    return await bootstrapGraph(writer, options, 'distributed', barProgress(bar));
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'ServiceUnavailable' || error instanceof DownstreamUnavailableError) {
      throw new Error(
        `cannot reach Neo4j at ${config.neo4j.url} (ENGRAM_NEO4J_URL): ${errorMessage(error)}`,
        { cause: error },
      );
    }
    throw error;
  } finally {
    bar.stop();
    await driver.close();
  }
}
