import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { DistillerModule } from './distiller.module';

/** The distiller service (SPEC §8): `node dist/apps/distiller/src/main.js`. */
async function main(): Promise<void> {
  const app = await NestFactory.createApplicationContext(DistillerModule);
  app.enableShutdownHooks();
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error);
  process.exit(1);
});
