import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { SegmenterModule } from './segmenter.module';

/** The segmenter service (SPEC §4): `node dist/apps/segmenter/src/main.js`. */
async function main(): Promise<void> {
  const app = await NestFactory.createApplicationContext(SegmenterModule);
  // Exit 0 once the service has stopped (by default Nest re-sends itself the signal).
  app.enableShutdownHooks(undefined, { useProcessExit: true });
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error);
  process.exit(1);
});
