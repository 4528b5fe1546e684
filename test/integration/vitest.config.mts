// Integration tier: real Kafka, Schema Registry, Elasticsearch and Neo4j, started once per run by
// the global setup and shared by every file (each test makes its own topics, indices and ids).
import { defineConfig } from 'vitest/config';
import { sharedConfig } from '../../vitest.shared.mts';

export default defineConfig({
  ...sharedConfig,
  test: {
    include: ['test/integration/**/*.test.ts'],
    globalSetup: ['test/integration/support/global-setup.ts'],
    setupFiles: ['reflect-metadata'],
    testTimeout: 120_000,
    hookTimeout: 300_000,
    // Two cores and four JVMs: run test files one after another for predictable timings.
    fileParallelism: false,
  },
});
