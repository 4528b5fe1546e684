import { loadConfig } from '@engram/config';
import type { Command } from 'commander';
import { checkServers } from './infra-health';

/**
 * `engram start`. The services themselves (segmenter, observer, distiller, retrieval) and the
 * embedded mode are not built yet; for now this checks that the distributed stack is up and
 * says so plainly.
 */
export function registerStartCommand(program: Command): void {
  program
    .command('start')
    .description('start Engram (today: check the distributed stack; services land in later issues)')
    .option(
      '--distributed',
      'run against the configured Kafka, Schema Registry, Elasticsearch and Neo4j',
      true,
    )
    .action(async () => {
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
      console.log(
        "\nThe stack is ready. Engram's services (segmenter, observer, distiller, retrieval) and the\n" +
          'embedded all-in-one mode are not built yet: they land with issues #3–#7.',
      );
    });
}
