import { execFileSync, spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { parseConfig } from '@engram/config';
import type { InfraEndpoints } from './infra-endpoints';

const INFRA_SH = resolve(__dirname, '../../../deploy/local/infra.sh');

/**
 * The servers as local processes (deploy/local). `infra.sh up` is idempotent: servers that are
 * already running are reused, and only what this run started is stopped at the end.
 */
export function startLocalInfra(): { endpoints: InfraEndpoints; stop: () => void } {
  const wasRunning = spawnSync('bash', [INFRA_SH, 'status'], { stdio: 'ignore' }).status === 0;
  execFileSync('bash', [INFRA_SH, 'up'], { stdio: 'inherit' });
  const config = parseConfig(process.env);
  return {
    endpoints: {
      mode: 'local-processes',
      kafkaBrokers: config.kafka.brokers,
      registryUrl: config.schemaRegistry.url,
      elasticsearchUrl: config.elasticsearch.url,
      neo4jUrl: config.neo4j.url,
    },
    stop: () => {
      if (!wasRunning) execFileSync('bash', [INFRA_SH, 'down'], { stdio: 'inherit' });
    },
  };
}
