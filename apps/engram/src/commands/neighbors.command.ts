import { loadConfig } from '@engram/config';
import {
  errorMessage,
  normaliseProjectPath,
  observerSettings,
  predictFileNeighbours,
  ProjectPathError,
  type CoAccessReader,
  type RankedFileNeighbour,
} from '@engram/core';
import { SqliteObserverGraph } from '@engram/embedded';
import { createNeo4jDriver, Neo4jObserverGraphWriter } from '@engram/neo4j';
import type { Command } from 'commander';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { positiveInteger } from './command-options';
import { DEFAULT_DATA_DIR } from './replay.command';

export interface NeighborsQuery {
  project: string;
  file: string;
  k: number;
  /** Omitted: the project's tenant, when exactly one tenant has a project of that id. */
  tenant?: string;
  /** The project root, to accept an absolute `--file`. */
  root?: string;
}

/** What `engram neighbors --json` prints (one JSON object). */
export interface NeighborsReport {
  project: string;
  /** null: no project of that id in the graph (then no neighbours either). */
  tenant: string | null;
  file: string;
  k: number;
  /**
   * Best first: the SPEC §12 fields (weight, rawCount, direction… of the CO_ACCESSED edge, zero
   * without one), `score` (the smoothed share of the file's sessions that touched the neighbour)
   * and `source` (co_access, co_commit, same_session, frequent): see libs/core file-prediction.
   */
  neighbors: RankedFileNeighbour[];
}

/**
 * The file's top neighbours from the graph (SPEC §12): what the observer predicts a session that
 * opens the file will touch next, ranked by evidence (libs/core rankFileNeighbours: the sessions
 * with both files, smoothed towards the project's most-touched files, which fill the list when
 * the graph knows little), with weight, raw count and direction of the co-access edge.
 */
export async function neighborsReport(
  graph: CoAccessReader,
  query: NeighborsQuery,
): Promise<NeighborsReport> {
  let file: string;
  try {
    file = normaliseProjectPath(query.file, query.root ?? null);
  } catch (error) {
    if (!(error instanceof ProjectPathError)) throw error;
    throw new Error(
      `--file: ${error.message}` + (error.reason === 'no_root' ? ' (pass --root DIR)' : ''),
      { cause: error },
    );
  }
  const tenant = query.tenant ?? (await onlyTenant(graph, query.project));
  const neighbors =
    tenant === null
      ? []
      : await predictFileNeighbours(graph, {
          tenantId: tenant,
          projectId: query.project,
          path: file,
          k: query.k,
        });
  return { project: query.project, tenant, file, k: query.k, neighbors };
}

async function onlyTenant(graph: CoAccessReader, project: string): Promise<string | null> {
  const tenants = await graph.tenantsOfProject(project);
  if (tenants.length > 1) {
    throw new Error(
      `project ${project} exists for several tenants (${tenants.join(', ')}): pass --tenant`,
    );
  }
  return tenants[0] ?? null;
}

/** The report as a table for people. */
export function formatNeighbors(report: NeighborsReport): string {
  if (report.neighbors.length === 0) {
    return report.tenant === null
      ? `no project ${report.project} in the graph yet`
      : `no files of ${report.project} in the graph yet`;
  }
  const arrow = { outgoing: '→ usually next', incoming: '← usually before', both: '↔' };
  const rows = report.neighbors.map((n, i) => {
    const head = `${String(i + 1).padStart(2)}. ${n.file}  score ${n.score.toFixed(2)}  ${n.source}`;
    return n.source === 'frequent' || n.source === 'same_session'
      ? `${head}  (in ${n.fileSessions} session(s))`
      : `${head}  weight ${n.weight.toFixed(2)}  raw ${n.rawCount}  sessions ${n.sessionCount}  ` +
          arrow[n.direction];
  });
  return [`neighbours of ${report.file} in ${report.project}:`, ...rows].join('\n');
}

type NeighborsOptions = NeighborsQuery & { json?: boolean; dataDir: string; distributed?: boolean };

export function registerNeighborsCommand(program: Command): void {
  program
    .command('neighbors')
    .description("a file's top co-access neighbours from the observer's graph")
    .requiredOption('--project <id>', 'the project (repository) id')
    .requiredOption('--file <path>', 'the file, relative to the project root')
    .option('--k <n>', 'how many neighbours', positiveInteger, 5)
    .option('--tenant <id>', 'the tenant (default: the only tenant with this project)')
    .option('--root <dir>', 'the project root, to accept an absolute --file')
    .option('--data-dir <dir>', 'embedded mode: the data directory', DEFAULT_DATA_DIR)
    .option('--distributed', 'read the graph from the configured Neo4j')
    .option('--json', 'print one JSON object')
    .action(async (options: NeighborsOptions) => {
      const report = options.distributed ? await fromNeo4j(options) : await fromEmbedded(options);
      console.log(options.json ? JSON.stringify(report) : formatNeighbors(report));
    });
}

async function fromEmbedded(options: NeighborsOptions): Promise<NeighborsReport> {
  if (!existsSync(join(options.dataDir, 'graph.db'))) {
    throw new Error(
      `no graph in ${options.dataDir} (--data-dir): run \`engram start\` and replay events first`,
    );
  }
  const graph = SqliteObserverGraph.open({ dataDir: options.dataDir, rule: observerSettings() });
  try {
    return await neighborsReport(graph, options);
  } finally {
    graph.close();
  }
}

async function fromNeo4j(options: NeighborsOptions): Promise<NeighborsReport> {
  const config = loadConfig();
  const driver = createNeo4jDriver(config.neo4j);
  try {
    return await neighborsReport(new Neo4jObserverGraphWriter(driver, observerSettings()), options);
  } catch (error) {
    if ((error as { code?: string }).code === 'ServiceUnavailable') {
      throw new Error(
        `cannot reach Neo4j at ${config.neo4j.url} (ENGRAM_NEO4J_URL): ${errorMessage(error)}`,
        { cause: error },
      );
    }
    throw error;
  } finally {
    await driver.close();
  }
}
