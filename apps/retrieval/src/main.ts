import 'reflect-metadata';
import { MetricsModule } from '@engram/metrics';
import { DISTRIBUTED_RETRIEVAL_PROVIDERS } from './elasticsearch-backend.module';
import { NestFactory } from '@nestjs/core';
import { RecallServerModule } from './recall.module';
import { RetrievalModule } from './retrieval.module';

/** The retrieval service (SPEC §7), indexer and gRPC recall: `node dist/apps/retrieval/src/main.js`. */
async function main(): Promise<void> {
  const app = await NestFactory.createApplicationContext(
    {
      module: RetrievalModule,
      // MetricsModule: /metrics, /healthz and /readyz on ENGRAM_METRICS_HOST:ENGRAM_METRICS_PORT.
      // Its providers on Kafka and Elasticsearch (issue #18: the service module injects them).
      imports: [...DISTRIBUTED_RETRIEVAL_PROVIDERS, RecallServerModule, MetricsModule],
    },
    { abortOnError: false },
  );
  // Exit 0 once the service has stopped (by default Nest re-sends itself the signal).
  app.enableShutdownHooks(undefined, { useProcessExit: true });
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error);
  process.exit(1);
});
