import 'reflect-metadata';
import { MetricsModule } from '@engram/metrics';
import { NestFactory } from '@nestjs/core';
import { RecallServerModule } from './recall.module';
import { RetrievalModule } from './retrieval.module';

/** The retrieval service (SPEC §7), indexer and gRPC recall: `node dist/apps/retrieval/src/main.js`. */
async function main(): Promise<void> {
  const app = await NestFactory.createApplicationContext({
    module: RetrievalModule,
    // MetricsModule: /metrics, /healthz and /readyz on ENGRAM_METRICS_HOST:ENGRAM_METRICS_PORT.
    imports: [RecallServerModule, MetricsModule],
  });
  // Exit 0 once the service has stopped (by default Nest re-sends itself the signal).
  app.enableShutdownHooks(undefined, { useProcessExit: true });
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error);
  process.exit(1);
});
