import { loadConfig, type EngramConfig } from '@engram/config';
import { segmenterSettings } from '@engram/core';
import { SqliteEventLog } from '@engram/embedded';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { Command } from 'commander';
import { mkdirSync } from 'node:fs';
import { prefixedTopics } from '../../../segmenter/src/segmenter.module';
import { startEmbeddedSegmenter } from '../../../segmenter/src/segmenter.embedded';
import { DistributedEngramModule } from '../distributed.module';
import { checkServers } from './infra-health';
import { DEFAULT_DATA_DIR } from './replay.command';

/**
 * `engram start`: Engram's services in this process until SIGINT/SIGTERM (graceful: the batch in
 * flight commits or aborts, nothing acknowledged is lost). Embedded by default — the SQLite log in
 * `--data-dir`, no servers; `--distributed` runs them against Kafka, the Schema Registry,
 * Elasticsearch and Neo4j. Embedded mode runs the segmenter today; distributed mode runs the
 * segmenter, the observer and the retrieval indexer.
 */
export function registerStartCommand(program: Command): void {
  program
    .command('start')
    .description('run the Engram services: embedded (default, no servers) or --distributed')
    .option('--data-dir <dir>', 'embedded mode: where the event log lives', DEFAULT_DATA_DIR)
    .option('--distributed', 'run against the configured Kafka, Schema Registry, ES and Neo4j')
    .option('--check', 'distributed mode: only check the servers and exit')
    .action(async (options: { dataDir: string; distributed?: boolean; check?: boolean }) => {
      const config = loadConfig();
      if (options.distributed || options.check) {
        await startDistributed(config, options.check ?? false);
      } else {
        await startEmbedded(config, options.dataDir);
      }
    });
}

async function startEmbedded(config: EngramConfig, dataDir: string): Promise<void> {
  mkdirSync(dataDir, { recursive: true });
  const log = SqliteEventLog.open({ dataDir });
  const segmenter = await startEmbeddedSegmenter({
    log,
    settings: segmenterSettings({
      inactivityTimeoutMinutes: config.segmenter.inactivityMinutes,
      inactivityTimeoutByChannel: config.segmenter.inactivityByChannel,
      inactivityTimeoutByTenant: config.segmenter.inactivityByTenant,
    }),
    topics: prefixedTopics(config.topicPrefix),
    groupId: config.topicPrefix + config.segmenter.groupId,
    partitions: config.segmenter.partitions,
    sweepIntervalMs: config.segmenter.sweepIntervalMs,
    retry: config.retry,
  });
  const logger = new Logger('engram');
  logger.log(
    `running embedded (${dataDir}/events.db): segmenter. Feed it with \`engram replay --file …\`; ` +
      'Ctrl-C stops it. The observer, distiller and retrieval are not built yet (issues #4–#6).',
  );
  const stop = async () => {
    await segmenter.stop();
    log.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
}

async function startDistributed(config: EngramConfig, checkOnly: boolean): Promise<void> {
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
  const app = await NestFactory.createApplicationContext(DistributedEngramModule, {
    logger: ['log', 'warn', 'error'],
  });
  app.enableShutdownHooks();
  new Logger('engram').log(
    'running distributed: segmenter (→ memory.episode-boundaries.v1, memory.episodes.v1, ' +
      'memory.thread-links.v1), observer (→ Neo4j graph), retrieval indexer (→ Elasticsearch). ' +
      'Ctrl-C stops them.',
  );
}
