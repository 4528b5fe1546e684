import { execFileSync } from 'node:child_process';
import type { TestProject } from 'vitest/node';
import { startContainerInfra } from './container-infra';
import { externalInfra, startLocalInfra } from './local-infra';

type InfraChoice = 'external' | 'testcontainers' | 'local-processes';

/**
 * ENGRAM_INFRA=external: servers already running at the configured endpoints. Otherwise Docker
 * when an engine answers (unless ENGRAM_INFRA=local), local processes (deploy/local) if not.
 */
function chooseInfra(): InfraChoice {
  if (process.env.ENGRAM_INFRA === 'external') return 'external';
  return dockerAvailable() ? 'testcontainers' : 'local-processes';
}

function dockerAvailable(): boolean {
  if (process.env.ENGRAM_INFRA === 'local') return false;
  try {
    execFileSync('docker', ['info'], { stdio: 'ignore', timeout: 10_000 });
    return true;
  } catch {
    return false;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const choice = chooseInfra();
  console.log(`[integration] servers: ${choice}`);
  const infra =
    choice === 'external'
      ? externalInfra()
      : choice === 'testcontainers'
        ? await startContainerInfra()
        : startLocalInfra();
  console.log(`[integration] endpoints: ${JSON.stringify(infra.endpoints)}`);
  project.provide('infra', infra.endpoints);
  return async () => {
    await Promise.resolve(infra.stop());
  };
}
