// A child process for crash tests (embedded-crash.spec.ts): the embedded services of `engram
// start` on the data dir in argv[2], with the settings the test's uninterrupted run uses, so the
// test can SIGKILL the whole process at any point. Prints "ready" once every stage runs.
import { parseConfig } from '@engram/config';
import { LEXICAL_ONLY_EMBEDDER } from '@engram/app-retrieval';
import { startEmbeddedServices } from '../embedded-services';

export const CRASH_TEST_SERVICE_OPTIONS = {
  sweepIntervalMs: 20,
  llm: null,
  retrievalEmbedder: LEXICAL_ONLY_EMBEDDER,
} as const;

async function main(dataDir: string): Promise<void> {
  await startEmbeddedServices({ config: parseConfig({}), dataDir, ...CRASH_TEST_SERVICE_OPTIONS });
  process.stdout.write('ready\n');
  // Keeps running until killed.
  setInterval(() => undefined, 60_000);
}

if (require.main === module) void main(process.argv[2]);
