import { errorMessage } from '@engram/errors';
import { Logger } from '@nestjs/common';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { processMetrics, type EngramMetrics } from './engram-metrics';

export interface MetricsAddress {
  host: string;
  /** 0: any free port (tests); the server's `url` says which. */
  port: number;
}

export interface MetricsServer {
  /** `http://host:port`. */
  url: string;
  stop(): Promise<void>;
}

/**
 * Serves the process's metrics and health over plain HTTP: `GET /metrics` (Prometheus text
 * format, with the default process metrics), `GET /healthz` (200 while the process runs) and
 * `GET /readyz` (200 when every readiness check passes, else 503 naming the failing checks).
 */
export async function startMetricsServer(
  address: MetricsAddress,
  metrics: EngramMetrics = processMetrics(),
): Promise<MetricsServer> {
  metrics.collectProcessMetrics();
  const server = createServer((request, response) => void answer(metrics, request, response));
  await listen(server, address);
  const { port } = server.address() as AddressInfo;
  const host = address.host.includes(':') ? `[${address.host}]` : address.host;
  return {
    url: `http://${host}:${port}`,
    stop: () => close(server),
  };
}

/**
 * The configured server (EngramConfig.metrics), or null when it is off or cannot listen: metrics
 * are no reason to stop the services, so a taken port is logged (with the fix) and start-up goes on.
 */
export async function serveMetrics(
  address: MetricsAddress | null,
  logger: Pick<Logger, 'log' | 'error'> = new Logger('Metrics'),
): Promise<MetricsServer | null> {
  if (!address) return null;
  try {
    const server = await startMetricsServer(address);
    logger.log(`metrics on ${server.url}/metrics, health on /healthz and /readyz`);
    return server;
  } catch (error) {
    logger.error(
      `no metrics: cannot listen on ${address.host}:${address.port} (${errorMessage(error)}); ` +
        'set ENGRAM_METRICS_PORT to a free port (0: off)',
    );
    return null;
  }
}

async function answer(
  metrics: EngramMetrics,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    return send(response, 405, 'text/plain; charset=utf-8', 'GET only\n');
  }
  const path = (request.url ?? '/').split('?')[0];
  try {
    if (path === '/metrics') {
      return send(response, 200, metrics.registry.contentType, await metrics.registry.metrics());
    }
    if (path === '/healthz') return send(response, 200, 'text/plain; charset=utf-8', 'ok\n');
    if (path === '/readyz') return sendReadiness(response, metrics.readiness.failing());
    send(response, 404, 'text/plain; charset=utf-8', 'not found: /metrics, /healthz, /readyz\n');
  } catch (error) {
    send(response, 500, 'text/plain; charset=utf-8', `${errorMessage(error)}\n`);
  }
}

function sendReadiness(response: ServerResponse, failing: string[]): void {
  const ready = failing.length === 0;
  send(response, ready ? 200 : 503, 'application/json', JSON.stringify({ ready, failing }));
}

function send(response: ServerResponse, status: number, contentType: string, body: string): void {
  response.writeHead(status, { 'content-type': contentType, 'cache-control': 'no-store' });
  response.end(body);
}

function listen(server: Server, { host, port }: MetricsAddress): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

function close(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.close((error) => (error ? reject(error) : resolve()));
    server.closeAllConnections();
  });
}
