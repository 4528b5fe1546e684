import {
  chmodSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  statSync,
} from 'node:fs';

/**
 * Embedded mode keeps prompts, tool calls and memories on disk: its data dir is private to the
 * user who runs Engram (0700) and so is every file in it (0600) — another local user must not
 * read them (issue #19). SQLite creates a database's -wal and -shm files with the database's
 * own permissions, so a database created 0600 stays private with its journals.
 */
export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** What makes an existing directory an Engram data dir (safe to tighten). */
const ENGRAM_FILES = ['events.db', 'retrieval.db', 'graph.db'];

function tighten(path: string, mode: number): void {
  try {
    if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, mode);
  } catch {
    // Not ours to change (another owner, a read-only mount): left as it is.
  }
}

/**
 * Creates a data dir (and its missing parents) 0700; an existing one is tightened to 0700 when
 * it is an Engram data dir (empty, or holding Engram's databases), never a shared directory
 * such as /tmp or a home directory given by mistake.
 */
export function ensurePrivateDir(dir: string): void {
  if (!existsSync(dir)) {
    mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
    return;
  }
  const stat = statSync(dir);
  if (!stat.isDirectory() || (stat.mode & 0o1000) !== 0) return; // a file, or sticky like /tmp
  const entries = readdirSync(dir);
  if (entries.length === 0 || ENGRAM_FILES.some((name) => entries.includes(name))) {
    tighten(dir, PRIVATE_DIR_MODE);
  }
}

/**
 * Makes a database file private before SQLite opens it: created empty 0600 when missing (SQLite
 * then keeps the mode for its -wal and -shm files), tightened to 0600 with its journals when it
 * exists with wider permissions (a data dir from an older Engram).
 */
export function preparePrivateFile(path: string): void {
  if (!existsSync(path)) {
    closeSync(openSync(path, 'a', PRIVATE_FILE_MODE));
    return;
  }
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    if (existsSync(file)) tighten(file, PRIVATE_FILE_MODE);
  }
}

/** ensurePrivateDir(dataDir), then preparePrivateFile of `path` in it. */
export function preparePrivateDatabase(dataDir: string, path: string): void {
  ensurePrivateDir(dataDir);
  preparePrivateFile(path);
}
