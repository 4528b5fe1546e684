import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { RetrievalModule } from './retrieval.module';

/** The retrieval service (SPEC §7), indexing half: `node dist/apps/retrieval/src/main.js`. */
async function main(): Promise<void> {
  const app = await NestFactory.createApplicationContext(RetrievalModule);
  app.enableShutdownHooks();
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error);
  process.exit(1);
});
