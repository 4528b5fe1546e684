import { loadConfig } from '@engram/config';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { Command } from 'commander';
import { SegmenterModule } from '../../../segmenter/src/segmenter.module';
import { checkServers } from './infra-health';

/**
 * `engram start`: checks the distributed stack, then runs Engram's services in this process
 * until SIGINT/SIGTERM (graceful: the open transaction commits or aborts, nothing is lost).
 * Today that is the segmenter; the observer, distiller and retrieval services and the embedded
 * one-process mode (no servers) land with their issues.
 */
export function registerStartCommand(program: Command): void {
  program
    .command('start')
    .description('run the Engram services against Kafka, the Schema Registry, Elasticsearch, Neo4j')
    .option(
      '--distributed',
      'run against the configured servers (the only mode until the embedded mode lands)',
      true,
    )
    .option('--check', 'only check the servers and exit')
    .action(async (options: { check?: boolean }) => {
      const results = await checkServers(loadConfig());
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
      if (options.check) return;
      const app = await NestFactory.createApplicationContext(SegmenterModule, {
        logger: ['log', 'warn', 'error'],
      });
      app.enableShutdownHooks();
      new Logger('engram').log(
        'running: segmenter (agent.prompts.v1, agent.tool-calls.v1, agent.lifecycle.v1 → ' +
          'memory.episode-boundaries.v1, memory.episodes.v1). Ctrl-C stops it. The observer, ' +
          'distiller, retrieval and the embedded mode are not built yet (issues #4–#7).',
      );
    });
}
