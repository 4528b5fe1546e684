import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { ObserverModule } from './observer.module';

/** The observer service (SPEC §5): `node dist/apps/observer/src/main.js`. */
async function main(): Promise<void> {
  const app = await NestFactory.createApplicationContext(ObserverModule);
  // Exit 0 once the service has stopped (by default Nest re-sends itself the signal).
  app.enableShutdownHooks(undefined, { useProcessExit: true });
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error);
  process.exit(1);
});
