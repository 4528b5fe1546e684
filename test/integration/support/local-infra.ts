import { execFileSync, spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { parseConfig } from '@engram/config';
import type { InfraEndpoints } from './infra-endpoints';

const INFRA_SH = resolve(__dirname, '../../../deploy/local/infra.sh');
const SERVERS = ['kafka', 'registry', 'elasticsearch', 'neo4j'] as const;

function isReady(server: string): boolean {
  return spawnSync('bash', [INFRA_SH, 'status', server], { stdio: 'ignore' }).status === 0;
}

function configuredEndpoints(): InfraEndpoints {
  const config = parseConfig(process.env);
  return {
    mode: 'local-processes',
    kafkaBrokers: config.kafka.brokers,
    registryUrl: config.schemaRegistry.url,
    elasticsearchUrl: config.elasticsearch.url,
    neo4jUrl: config.neo4j.url,
  };
}

/**
 * The servers as local processes (deploy/local). Servers that are already running are reused and
 * left running; only the ones this run started are stopped at the end, so a developer's
 * `npm run infra:up` survives a test run.
 */
export function startLocalInfra(): { endpoints: InfraEndpoints; stop: () => void } {
  const startedHere = SERVERS.filter((server) => !isReady(server));
  if (startedHere.length > 0) {
    execFileSync('bash', [INFRA_SH, 'up', ...startedHere], { stdio: 'inherit' });
  }
  return {
    endpoints: configuredEndpoints(),
    stop: () => {
      if (startedHere.length > 0) {
        execFileSync('bash', [INFRA_SH, 'down', ...startedHere], { stdio: 'inherit' });
      }
    },
  };
}

/** Servers someone else runs (ENGRAM_INFRA=external): use the configured endpoints, start nothing. */
export function externalInfra(): { endpoints: InfraEndpoints; stop: () => void } {
  return { endpoints: { ...configuredEndpoints(), mode: 'external' }, stop: () => undefined };
}
