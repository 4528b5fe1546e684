import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { SegmenterModule } from './segmenter.module';

/** The segmenter service (SPEC §4): `node dist/apps/segmenter/src/main.js`. */
async function main(): Promise<void> {
  const app = await NestFactory.createApplicationContext(SegmenterModule);
  app.enableShutdownHooks();
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error);
  process.exit(1);
});
