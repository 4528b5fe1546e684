import { closeSync, fsyncSync, openSync, statSync, unlinkSync, writeSync } from 'node:fs';

// Synchronous on purpose (see hook-spool.ts): a hook that runs out of time exits at once, and a
// synchronous write cannot be cut in half by that exit.

/** True when the file exists and is not empty. */
export function hasContent(path: string): boolean {
  try {
    return statSync(path).size > 0;
  } catch {
    return false;
  }
}

/** Appends and fsyncs before returning. */
export function appendDurably(path: string, text: string): void {
  const fd = openSync(path, 'a');
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Writes the whole file and fsyncs before returning (then rename it into place). */
export function writeDurably(path: string, text: string): void {
  const fd = openSync(path, 'w');
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Creates a lock file holding this pid; false when it exists. */
export function createLockFile(path: string): boolean {
  try {
    const fd = openSync(path, 'wx');
    writeSync(fd, `${process.pid} ${new Date().toISOString()}\n`);
    closeSync(fd);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

/** True when the file is older than `staleMs` (or gone). */
export function isStale(path: string, staleMs: number): boolean {
  try {
    return Date.now() - statSync(path).mtimeMs > staleMs;
  } catch {
    return true;
  }
}

/** Removes a file that may already be gone. */
export function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Already gone.
  }
}
