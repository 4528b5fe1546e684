import 'reflect-metadata';
import { EmbedderModule } from '@engram/ai';
import { ConfigModule } from '@engram/config';
import { KafkaStreamPlatformModule } from '@engram/kafka';
import { MetricsModule } from '@engram/metrics';
import { Neo4jObserverGraphModule } from '@engram/neo4j';
import { NestFactory } from '@nestjs/core';
import { ObserverModule } from './observer.module';

/** The observer service (SPEC §5): `node dist/apps/observer/src/main.js`. */
async function main(): Promise<void> {
  // MetricsModule: /metrics, /healthz and /readyz on ENGRAM_METRICS_HOST:ENGRAM_METRICS_PORT.
  const app = await NestFactory.createApplicationContext(
    {
      module: ObserverModule,
      // Its providers on Kafka and Neo4j (issue #18: the service module injects them).
      imports: [
        ConfigModule,
        KafkaStreamPlatformModule,
        Neo4jObserverGraphModule,
        EmbedderModule,
        MetricsModule,
      ],
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
