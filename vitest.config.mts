// Unit tier: no servers, no network, no Docker. `*.spec.ts` beside the code.
import { defineConfig } from 'vitest/config';
import { sharedConfig } from './vitest.shared.mts';

export default defineConfig({
  ...sharedConfig,
  test: {
    include: ['apps/**/*.spec.ts', 'libs/**/*.spec.ts', 'test/unit/**/*.spec.ts'],
    setupFiles: ['reflect-metadata'],
  },
});
