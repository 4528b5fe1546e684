import 'reflect-metadata';
import { EmbedderModule } from '@engram/ai';
import { ConfigModule, ConfiguredServiceSettingsModule } from '@engram/config';
import { KafkaStreamPlatformModule } from '@engram/kafka';
import { MetricsModule } from '@engram/metrics';
import { NestFactory } from '@nestjs/core';
import { SegmenterModule } from './segmenter.module';

/** The segmenter service (SPEC §4): `node dist/apps/segmenter/src/main.js`. */
async function main(): Promise<void> {
  // MetricsModule: /metrics, /healthz and /readyz on ENGRAM_METRICS_HOST:ENGRAM_METRICS_PORT.
  const app = await NestFactory.createApplicationContext(
    {
      module: SegmenterModule,
      // Its providers on Kafka (issue #18: the service module injects them).
      imports: [
        ConfigModule,
        KafkaStreamPlatformModule,
        EmbedderModule,
        ConfiguredServiceSettingsModule,
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
