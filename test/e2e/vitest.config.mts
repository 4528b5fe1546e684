// End-to-end tier: the compiled `engram` CLI as an operator runs it (`start --distributed`,
// `replay`, `neighbors`) against the real Kafka, Schema Registry, Elasticsearch and Neo4j, which
// the integration tier's global setup starts or reuses. Assertions go through the public APIs
// only (the CLI's output and the gRPC recall API).
import { defineConfig } from 'vitest/config';
import { sharedConfig } from '../../vitest.shared.mts';

export default defineConfig({
  ...sharedConfig,
  test: {
    include: ['test/e2e/**/*.test.ts'],
    globalSetup: ['test/integration/support/global-setup.ts'],
    setupFiles: ['reflect-metadata'],
    testTimeout: 120_000,
    hookTimeout: 300_000,
    // One Engram at a time on two cores beside four JVMs.
    fileParallelism: false,
  },
});
