import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { ObserverModule } from './observer.module';

/** The observer service (SPEC §5): `node dist/apps/observer/src/main.js`. */
async function main(): Promise<void> {
  const app = await NestFactory.createApplicationContext(ObserverModule);
  app.enableShutdownHooks();
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error);
  process.exit(1);
});
