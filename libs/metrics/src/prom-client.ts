import type * as PromClient from 'prom-client';

let loaded: typeof PromClient | undefined;

/**
 * prom-client, loaded on first use: adapters that record metrics are also loaded by `engram hook`,
 * which runs on every agent event and never records any (loading prom-client costs ~30 ms).
 */
export function promClient(): typeof PromClient {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  loaded ??= require('prom-client') as typeof PromClient;
  return loaded;
}
