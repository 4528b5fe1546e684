import { grpcTokensOf, loadConfig, type EngramConfig } from '@engram/config';
import { assertServable, type TenantTokens } from '@engram/core';
import { EmbeddedStreamPlatform, ensurePrivateDir, SqliteEventLogAdapter } from '@engram/embedded';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { Command } from 'commander';
import {
  DEFAULT_RECALL_GRPC_URL,
  hydeClientOf,
  publishTombstonesTo,
  sqliteBackend,
  startRecallServer,
  type RecallStack,
} from '@engram/app-retrieval';
import { distributedEngramModule } from '../distributed.module';
import { startEmbeddedServices, type EmbeddedServices } from '../embedded-services';
import { installModelOnFirstRun } from '../model-download';
import {
  serveDistributedHookSocket,
  serveEmbeddedHookSocket,
  type HookSocketServer,
} from '../hook-socket-server';
import { embeddedHookPublisher } from './hook.command';
import { checkServers } from './infra-health';
import { DEFAULT_DATA_DIR } from './replay.command';

/**
 * `engram start`: Engram's services in this process until SIGINT/SIGTERM (graceful: the batch in
 * flight commits or aborts, nothing acknowledged is lost). Embedded by default — the SQLite log in
 * `--data-dir`, no servers; `--distributed` runs them against Kafka, the Schema Registry,
 * Elasticsearch and Neo4j. Both run the segmenter, observer, distiller and retrieval indexer,
 * and serve the gRPC recall API and the review API (engram.review.v1, ENGRAM_REVIEW_GRPC_URL).
 */
export function registerStartCommand(program: Command): void {
  program
    .command('start')
    .description('run the Engram services: embedded (default, no servers) or --distributed')
    .option(
      '--data-dir <dir>',
      'where the event log (embedded mode) and the hook socket (hook.sock) live',
      DEFAULT_DATA_DIR,
    )
    .option('--distributed', 'run against the configured Kafka, Schema Registry, ES and Neo4j')
    .option('--check', 'distributed mode: only check the servers and exit')
    .option(
      '--grpc <host:port>',
      `embedded mode: where the gRPC recall API listens (default ENGRAM_RECALL_GRPC_URL, ${DEFAULT_RECALL_GRPC_URL})`,
    )
    .action(
      async (options: {
        dataDir: string;
        distributed?: boolean;
        check?: boolean;
        grpc?: string;
      }) => {
        const config = loadConfig();
        if (options.distributed || options.check) {
          await startDistributed(config, options.check ?? false, options.dataDir);
        } else {
          await startEmbedded(config, options.dataDir, options.grpc ?? config.recall.grpcUrl);
        }
      },
    );
}

async function startEmbedded(config: EngramConfig, dataDir: string, grpcUrl: string) {
  // Before anything starts: a bad tokens file, or an open server on the network, stops here.
  const tokens = grpcTokensOf(config);
  assertServable(grpcUrl, tokens, 'engram.recall.v1');
  const reviewUrl = config.distiller.reviewGrpcUrl;
  assertServable(reviewUrl, tokens, 'engram.review.v1');
  ensurePrivateDir(dataDir);
  await installModelOnFirstRun(config);
  const services = await startEmbeddedServices({
    config,
    dataDir,
    review: { url: reviewUrl, tokens },
    metrics: config.metrics,
  });
  let grpc: EmbeddedGrpc;
  try {
    grpc = await serveEmbeddedGrpc(config, dataDir, services, grpcUrl, tokens);
  } catch (error) {
    await services.stop();
    console.error(`engram start: cannot serve the gRPC recall API on ${grpcUrl}: ${String(error)}`);
    process.exitCode = 1;
    return;
  }
  const hooks = await hookSocketOf(() =>
    serveEmbeddedHookSocket({ config, dataDir, context: grpc.context, log: hookSocketLog }),
  );
  const metrics = services.metrics ? `, metrics on ${services.metrics.url}/metrics` : '';
  new Logger('engram').log(
    `running embedded (${dataDir}): ${services.running.join(', ')}, the gRPC recall API ` +
      `(${grpc.url}) and review API (${reviewUrl})${metrics}${hookSocketNote(hooks)}. ` +
      'Feed it with `engram replay --file …`, ' +
      'ask with `engram recall`, review with `engram review`; Ctrl-C stops it.',
  );
  const stop = async () => {
    await hooks?.stop();
    await grpc.stop();
    await services.stop();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
}

export interface EmbeddedGrpc {
  url: string;
  /** The recall stack's context service (the hook socket answers with it too). */
  context: RecallStack['context'];
  stop(): Promise<void>;
}

const hookSocketLog = (line: string) => new Logger('engram').warn(line);

/** The hook socket (issue #22), or null — said in the log — when it cannot be served. */
async function hookSocketOf(
  serve: () => Promise<HookSocketServer | null>,
): Promise<HookSocketServer | null> {
  try {
    return await serve();
  } catch (error) {
    hookSocketLog(`hook socket not served: ${String(error)}; hooks run on their own`);
    return null;
  }
}

function hookSocketNote(hooks: HookSocketServer | null): string {
  return hooks ? `, hooks through ${hooks.path}` : '';
}

/**
 * The recall API over the embedded stores: the retrieval store the indexer writes (same model),
 * the SQLite observer graph for GetFileNeighbors, and the embedded log for Remember and Feedback
 * (whose deletions are tombstones the services' indexer also applies). Exported for tests that
 * compose `engram start` in process (agent-round-trip.spec.ts).
 */
export async function serveEmbeddedGrpc(
  config: EngramConfig,
  dataDir: string,
  services: EmbeddedServices,
  url: string,
  tokens: TenantTokens | null,
): Promise<EmbeddedGrpc> {
  const events = await embeddedHookPublisher(config, dataDir, REMEMBER_BUSY_TIMEOUT_MS);
  try {
    // The distributed server, on the SQLite backend. (A Nest app's logger levels are global:
    // keep `log`, or the lines after it go silent.)
    const server = await startRecallServer({
      ranking: loadConfig().ranking,
      backend: sqliteBackend(services.retrieval.store),
      embedder: services.retrieval.embedder,
      publish: events.publish,
      publishTombstones: publishTombstonesTo(
        new SqliteEventLogAdapter(services.log),
        config.topicPrefix,
      ),
      hyde: hydeClientOf(config.llm),
      // Its session notes are a view of the log's lifecycle events (they survive a restart).
      lifecycle: {
        platform: new EmbeddedStreamPlatform(services.log),
        topicPrefix: config.topicPrefix,
        partitions: config.inputs.partitions,
      },
      url,
      tokens,
      neighbours: services.graph,
      logger: ['log', 'warn', 'error'],
    });
    return {
      url,
      context: server.context,
      async stop() {
        await server.stop();
        await events.close();
      },
    };
  } catch (error) {
    await events.close();
    throw error;
  }
}

/** Remember waits this long for the embedded log's write lock (the services write too). */
const REMEMBER_BUSY_TIMEOUT_MS = 5_000;

async function startDistributed(
  config: EngramConfig,
  checkOnly: boolean,
  dataDir: string,
): Promise<void> {
  // Before the servers are checked: a bad tokens file, or an open server on the network.
  const tokens = grpcTokensOf(config);
  assertServable(config.recall.grpcUrl, tokens, 'engram.recall.v1');
  assertServable(config.distiller.reviewGrpcUrl, tokens, 'engram.review.v1');
  const results = await checkServers(config);
  for (const r of results) {
    console.log(
      `${r.ok ? 'ok  ' : 'DOWN'}  ${r.server.padEnd(16)} ${r.address.padEnd(44)} ${r.detail}`,
    );
  }
  const down = results.filter((r) => !r.ok);
  if (down.length > 0) {
    console.error(`\n${down.length} server(s) down: start them with \`npm run infra:up\`.`);
    process.exitCode = 1;
    return;
  }
  if (checkOnly) return;
  const app = await NestFactory.createApplicationContext(distributedEngramModule(), {
    logger: ['log', 'warn', 'error'],
    // A server that refuses at start-up is an error for the caller, not a process abort.
    abortOnError: false,
  });
  // Exit 0 once the services have stopped (by default Nest re-sends itself the signal); the hook
  // socket goes with the process (hooks caught mid-way take their direct path).
  app.enableShutdownHooks(undefined, { useProcessExit: true });
  ensurePrivateDir(dataDir);
  const hooks = await hookSocketOf(() =>
    serveDistributedHookSocket({ config, dataDir, log: hookSocketLog }),
  );
  new Logger('engram').log(
    'running distributed: segmenter (→ memory.episode-boundaries.v1, memory.episodes.v1, ' +
      'memory.thread-links.v1), observer (→ Neo4j graph, memory.memories.v1), distiller ' +
      '(→ memory.memories.v1, episode summaries; LLM when ENGRAM_LLM_* is set), retrieval indexer ' +
      `(→ Elasticsearch) and the gRPC recall API (${config.recall.grpcUrl})` +
      `${hookSocketNote(hooks)}. ` +
      'Ctrl-C stops them.',
  );
}
