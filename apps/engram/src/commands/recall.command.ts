import type { Client } from '@elastic/elasticsearch';
import { createEmbedder } from '@engram/ai';
import { loadConfig } from '@engram/config';
import { DownstreamUnavailableError } from '@engram/core';
import {
  createElasticsearchClient,
  retrievalIndexNames,
  tenantsWithProject,
  type ElasticsearchIndexNames,
} from '@engram/elasticsearch';
import { InvalidArgumentError, type Command } from 'commander';
import { SqliteRetrievalStore } from '@engram/embedded';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import {
  hydeClientOf,
  createRecallStack,
  elasticsearchBackend,
  type RecallStack,
  sqliteBackend,
  embeddedEmbedder,
} from '@engram/app-retrieval';
import type { RecallService } from '@engram/app-retrieval';
import { positiveInteger } from './command-options';
import {
  answerRecall,
  runRecallBatch,
  type RecallDefaults,
  type RecallDeps,
} from './recall-answer';
import { markedStaleByWorkingTree, recallFilesGoneManifest } from './files-gone-manifest';
import { distributedHookPublisher, embeddedHookPublisher } from './hook-publishers';
import { formatRecall, recallLineInWorkingTree } from './recall-output';
import { DEFAULT_DATA_DIR } from './replay.command';

const TIERS = ['turns', 'episodes', 'memories', 'all'];

function tierOption(value: string): string {
  if (!TIERS.includes(value)) throw new InvalidArgumentError(`must be one of ${TIERS.join(', ')}`);
  return value;
}

interface RecallOptions extends RecallDefaults {
  query?: string;
  queries?: string;
  json?: boolean;
  /** The project's working tree: memories about files all gone from it are marked stale. */
  dir?: string;
  dataDir: string;
  distributed?: boolean;
}

/** Recall on the configured Elasticsearch (distributed mode), through RecallService. */
export function elasticsearchRecallDeps(
  client: Client,
  indices: ElasticsearchIndexNames,
  service: RecallService,
): RecallDeps {
  return {
    service,
    tenantsOf: (project) => tenantsWithProject(client, Object.values(indices), project),
  };
}

/** Recall on the embedded store in a data directory (what `engram start` indexes into). */
export function embeddedRecallDeps(store: SqliteRetrievalStore, stack: RecallStack): RecallDeps {
  return { service: stack.service, tenantsOf: (project) => store.tenantsWithProject(project) };
}

/**
 * Embedded (default): the SQLite retrieval store in `--data-dir`, no server. Without the local
 * model the recall is lexical only, said on stderr (stdout stays the answer, `--json` parseable).
 */
async function recallEmbedded(options: RecallOptions): Promise<void> {
  const store = SqliteRetrievalStore.open({ dataDir: options.dataDir });
  const embedder = await embeddedEmbedder({ warn: (message) => console.error(message) });
  const stack = createRecallStack({
    ranking: loadConfig().ranking,
    backend: sqliteBackend(store),
    embedder,
    hyde: hydeClientOf(loadConfig().llm),
  });
  try {
    await runRecallCommand(options, embeddedRecallDeps(store, stack));
  } finally {
    // Written before exit: a recall from the command line counts as an access too.
    await stack.access.close().catch(() => undefined);
    store.close();
  }
}

async function recallDistributed(options: RecallOptions): Promise<void> {
  const config = loadConfig();
  const client = createElasticsearchClient(config.elasticsearch.url);
  const indices = retrievalIndexNames(config.topicPrefix);
  const stack = createRecallStack({
    ranking: loadConfig().ranking,
    backend: elasticsearchBackend(client, indices),
    embedder: await createEmbedder(),
    hyde: hydeClientOf(config.llm),
  });
  try {
    await runRecallCommand(options, elasticsearchRecallDeps(client, indices, stack.service));
  } catch (error) {
    if (error instanceof DownstreamUnavailableError) {
      throw new Error(
        `cannot reach Elasticsearch at ${config.elasticsearch.url} (ENGRAM_ES_URL): ${error.message}`,
        { cause: error },
      );
    }
    throw error;
  } finally {
    await stack.access.close().catch(() => undefined);
    await client.close();
  }
}

async function runRecallCommand(options: RecallOptions, deps: RecallDeps): Promise<void> {
  const defaults: RecallDefaults = {
    project: options.project,
    tenant: options.tenant,
    phase: options.phase,
    k: options.k,
    tier: options.tier,
    track: options.track,
  };
  if (options.queries !== undefined) {
    const content = await readFile(options.queries, 'utf8');
    const summary = await runRecallBatch(deps, content, defaults, process.stdout, process.stderr);
    if (summary.failed > 0) {
      console.error(
        `${summary.failed} line(s) could not be answered, ${summary.answered} answered`,
      );
      process.exitCode = 3;
    }
    return;
  }
  // A refused request (RecallLineError) ends the command with its message and exit code 1.
  const answer = await answerRecall(deps, { query: options.query }, defaults);
  const line = recallLineInWorkingTree(answer, options.dir);
  console.log(options.json ? JSON.stringify(line) : formatRecall(line));
  const filesGone = markedStaleByWorkingTree(answer.results, line.results);
  if (filesGone && options.dir !== undefined && line.tenant !== null) {
    const config = loadConfig();
    const message = await recallFilesGoneManifest({
      dir: resolve(options.dir),
      dataDir: options.dataDir,
      tenantId: line.tenant,
      projectId: line.project,
      openPublisher: () =>
        options.distributed
          ? distributedHookPublisher(config)
          : embeddedHookPublisher(config, options.dataDir, PUBLISH_BUSY_TIMEOUT_MS),
    });
    if (message) console.error(message);
  }
}

/** How long the files-gone manifest waits for the embedded log's write lock. */
const PUBLISH_BUSY_TIMEOUT_MS = 5_000;

export function registerRecallCommand(program: Command): void {
  program
    .command('recall')
    .description('hybrid recall (BM25 + kNN, phase-weighted) over turns, episodes and memories')
    .option('--query <text>', 'what to recall')
    .option(
      '--queries <file>',
      'JSON lines {id, query, phase?, k?, project?}: one JSON line out per query',
    )
    .option(
      '--phase <phase>',
      'universal phase (define, implement, validate, refine, explore, reflect)',
    )
    .option('--k <n>', 'how many results (default 10)', positiveInteger)
    .option('--project <id>', 'the project (repository) id')
    .option('--tenant <id>', 'the tenant (default: the only tenant with this project)')
    .option('--tier <tier>', 'turns | episodes | memories | all (default all)', tierOption)
    .option('--json', 'print one JSON object')
    .option(
      '--dir <dir>',
      "the project's working tree: a memory about files all gone from it is marked [STALE]",
    )
    .option(
      '--no-track',
      'do not count the returned memories as accessed (evaluations, dashboards: deterministic)',
    )
    .option('--data-dir <dir>', 'embedded mode: the data directory', DEFAULT_DATA_DIR)
    .option('--distributed', 'recall from the configured Elasticsearch instead')
    .action(async (options: RecallOptions) => {
      if ((options.query === undefined) === (options.queries === undefined)) {
        throw new Error('pass exactly one of --query TEXT or --queries FILE.jsonl');
      }
      await (options.distributed ? recallDistributed(options) : recallEmbedded(options));
    });
}
