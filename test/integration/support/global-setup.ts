import { execFileSync } from 'node:child_process';
import type { TestProject } from 'vitest/node';
import { startContainerInfra } from './container-infra';
import { startLocalInfra } from './local-infra';

/** Docker when an engine answers (unless ENGRAM_INFRA=local), local processes otherwise. */
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
  const useDocker = dockerAvailable();
  console.log(
    `[integration] servers: ${useDocker ? 'testcontainers (Docker engine found)' : 'local processes via deploy/local (no Docker engine)'}`,
  );
  const infra = useDocker ? await startContainerInfra() : startLocalInfra();
  console.log(`[integration] endpoints: ${JSON.stringify(infra.endpoints)}`);
  project.provide('infra', infra.endpoints);
  return async () => {
    await Promise.resolve(infra.stop());
  };
}
