import type { Server } from '@grpc/grpc-js';
import type { PackageDefinition } from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';
import { processMetrics } from '@engram/metrics';
import { HealthImplementation, type ServingStatusMap } from 'grpc-health-check';

/** The fully qualified names of the services a package definition holds (e.g. `engram.recall.v1.Recall`). */
export function servicesOf(definition: PackageDefinition): string[] {
  return Object.entries(definition)
    .filter(([, entry]) => !('format' in entry))
    .map(([name]) => name)
    .sort();
}

/**
 * Adds the standard gRPC Health Checking (grpc.health.v1.Health) and Server Reflection
 * (grpc.reflection.v1 / v1alpha) services to a server: load balancers, Kubernetes probes and
 * `grpcurl` / `grpc_health_probe` then work against Engram without its proto files. Every
 * service of the definition, and the whole server (""), reports SERVING: the server only starts
 * listening once its stores are open; an outage later is answered per call (UNAVAILABLE).
 * Usable as @nestjs/microservices' `onLoadPackageDefinition` and on a bare grpc-js Server.
 */
export function addHealthAndReflection(
  definition: PackageDefinition,
  server: Pick<Server, 'addService'>,
): HealthImplementation {
  const statuses: ServingStatusMap = { '': 'SERVING' };
  for (const service of servicesOf(definition)) statuses[service] = 'SERVING';
  const health = new HealthImplementation(statuses);
  health.addToServer(server);
  new ReflectionService(definition).addToServer(server);
  return health;
}

/**
 * Starts a gRPC microservice, turning grpc-js' "No address added … EADDRINUSE" into an error that
 * names the address, the setting that chose it and the fix: a taken port is the usual reason a
 * service dies at start-up (another Engram on the same machine). Once it listens, /readyz checks
 * `grpc server <url>` until the server closes.
 */
export async function listenOrExplain(
  app: { listen(): Promise<unknown>; close(): Promise<void> },
  url: string,
  setting: string,
): Promise<void> {
  try {
    await app.listen();
    readyUntilClosed(app, `grpc server ${url}`);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    const taken = reason.includes('EADDRINUSE');
    throw new Error(
      `cannot listen on ${url} (${setting}): ${taken ? 'the address is already in use' : reason}; ` +
        `stop the process using it or set ${setting} to a free host:port`,
      { cause: error },
    );
  }
}

/**
 * Adds the readiness check `name` (libs/metrics' /readyz) for a server that listens now, and
 * removes it when the server closes.
 */
function readyUntilClosed(app: { close(): Promise<void> }, name: string): void {
  const remove = processMetrics().readiness.add(name, () => true);
  const close = app.close.bind(app);
  app.close = () => {
    remove();
    return close();
  };
}
