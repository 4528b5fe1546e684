import {
  errorMessage,
  mergeHookSessionStates,
  newHookSessionState,
  parseHookSessionState,
  uuidV5,
  type HookSessionState,
} from '@engram/core';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
} from 'node:fs';
import { join } from 'node:path';
import { unlinkQuietly, writeDurably } from './durable-files';

/**
 * The per-session counters of the hook (HookSessionState), one small JSON file per session in
 * `<spool>/sessions/`. `update` is a read-modify-write under a real lock — an IMMEDIATE
 * transaction on the SQLite file `sessions/.lock.db`, i.e. the kernel's record lock: it is held
 * by one process at a time, waited for at most `lockWaitMs` (busy_timeout), and released by the
 * kernel if its holder dies, so there is no stale lock to break and no way for two hooks of one
 * session running at once (parallel tool calls) to be handed the same promptId or stepIndex.
 *
 * If the lock cannot be had within the wait (a machine too loaded to run one 5 ms update in
 * 5 s), the state is NOT written: `change` runs on the stored state with `locked: false`, and the
 * caller makes ids that cannot collide (mapClaudeCodeHook's `idSalt`); a warning says so.
 *
 * When the data dir cannot hold the state (unwritable, a file, disk full), the first usable
 * `fallbackSpoolDirs` entry holds it instead (seeded from the data dir's copy when readable), and
 * a warning says so; once the data dir works again, the larger counters of both are kept.
 */
export class HookSessionStore {
  readonly dir: string;
  private readonly fallbackDirs: string[];

  constructor(
    spoolDir: string,
    private readonly options: { lockWaitMs?: number; fallbackSpoolDirs?: readonly string[] } = {},
  ) {
    this.dir = join(spoolDir, 'sessions');
    this.fallbackDirs = (options.fallbackSpoolDirs ?? []).map((dir) => join(dir, 'sessions'));
  }

  pathOf(sessionId: string, dir = this.dir): string {
    const safe = /^[A-Za-z0-9_-]{1,100}$/.test(sessionId) ? sessionId : uuidV5(sessionId);
    return join(dir, `${safe}.json`);
  }

  read(sessionId: string): HookSessionState {
    return readState(this.pathOf(sessionId));
  }

  /**
   * Runs `change` on the session's state and stores what it returns (atomically: temp + rename),
   * under the lock. `locked` is false only when the lock could not be had in time: then nothing
   * is stored (see the class comment).
   */
  update<T>(
    sessionId: string,
    change: (state: HookSessionState, locked: boolean) => { state: HookSessionState; value: T },
  ): { value: T; warning: string | null } {
    let primaryError: unknown;
    try {
      return this.updateIn(this.dir, sessionId, change, null);
    } catch (error) {
      if (error instanceof SessionLockTimeout) return this.unlocked(sessionId, change, error);
      primaryError = error;
    }
    for (const dir of this.fallbackDirs) {
      try {
        const done = this.updateIn(dir, sessionId, change, this.pathOf(sessionId));
        const note =
          `session state kept in ${dir}: ${this.dir} is not usable ` +
          `(${errorMessage(primaryError)})`;
        return { value: done.value, warning: done.warning ? `${note}; ${done.warning}` : note };
      } catch (error) {
        if (error instanceof SessionLockTimeout) return this.unlocked(sessionId, change, error);
      }
    }
    throw primaryError;
  }

  private updateIn<T>(
    dir: string,
    sessionId: string,
    change: (state: HookSessionState, locked: boolean) => { state: HookSessionState; value: T },
    /** In a fallback dir: the data dir's copy, to start from when this dir has none. */
    seedFrom: string | null,
  ): { value: T; warning: string | null } {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const path = this.pathOf(sessionId, dir);
    const lock = openLockDb(join(dir, '.lock.db'), this.options.lockWaitMs ?? 5_000);
    try {
      try {
        lock.exec('BEGIN IMMEDIATE');
      } catch (error) {
        if ((error as { code?: string }).code === 'SQLITE_BUSY') {
          throw new SessionLockTimeout(path, this.options.lockWaitMs ?? 5_000);
        }
        throw error;
      }
      try {
        let current = existsSync(path)
          ? readState(path)
          : seedFrom
            ? readState(seedFrom)
            : newHookSessionState();
        // Back from a fallback: keep the larger counters, so no counter-based id is given twice.
        const moved = seedFrom
          ? []
          : this.fallbackDirs.map((other) => this.pathOf(sessionId, other)).filter(existsSync);
        for (const other of moved) current = mergeHookSessionStates(current, readState(other));
        const { state, value } = change(current, true);
        const temporary = `${path}.${process.pid}.tmp`;
        writeDurably(temporary, JSON.stringify(state));
        renameSync(temporary, path);
        for (const other of moved) unlinkQuietly(other);
        return { value, warning: null };
      } finally {
        lock.exec('COMMIT');
      }
    } finally {
      lock.close();
    }
  }

  private unlocked<T>(
    sessionId: string,
    change: (state: HookSessionState, locked: boolean) => { state: HookSessionState; value: T },
    timeout: SessionLockTimeout,
  ): { value: T; warning: string } {
    const { value } = change(this.read(sessionId), false);
    return { value, warning: `${timeout.message}; counters not updated, ids made unique instead` };
  }

  /**
   * Takes the turn named `key` (a project root's files-gone manifest) when `due` says the last
   * one — its time, stored under the key beside the sessions' state — is long enough ago: stores
   * `now` and answers true. Under the session lock, so hooks in separate processes (and `engram
   * recall`) take one turn between them. False, and nothing stored, when the lock cannot be had
   * in time or the directory is not usable: a turn nobody can record is not taken.
   */
  claimTurn(key: string, now: number, due: (lastAt: number | null) => boolean): boolean {
    try {
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      const path = join(this.dir, `${uuidV5(key)}.turn`);
      const lock = openLockDb(join(this.dir, '.lock.db'), this.options.lockWaitMs ?? 5_000);
      try {
        lock.exec('BEGIN IMMEDIATE');
        try {
          if (!due(readTurn(path))) return false;
          const temporary = `${path}.${process.pid}.tmp`;
          writeDurably(temporary, JSON.stringify({ at: now }));
          renameSync(temporary, path);
          return true;
        } finally {
          lock.exec('COMMIT');
        }
      } finally {
        lock.close();
      }
    } catch {
      return false;
    }
  }

  /** Removes the state of sessions untouched for `maxAgeMs` (run at SessionStart). */
  prune(maxAgeMs: number, now = Date.now()): number {
    let removed = 0;
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return 0;
    }
    for (const name of names) {
      if (!name.endsWith('.json')) continue;
      const path = join(this.dir, name);
      try {
        if (now - statSync(path).mtimeMs > maxAgeMs) {
          unlinkSync(path);
          removed += 1;
        }
      } catch (error) {
        void errorMessage(error); // Raced with another prune: fine.
      }
    }
    return removed;
  }
}

/** The session lock was not had within its wait. */
export class SessionLockTimeout extends Error {
  constructor(path: string, waitMs: number) {
    super(`session state ${path} stayed locked for ${waitMs} ms`);
  }
}

type LockDb = { exec(sql: string): unknown; close(): unknown };

/** better-sqlite3, loaded on first use (the hook pays for it only when it counts). */
let sqlite: (new (path: string, options: { timeout: number }) => LockDb) | null = null;

function openLockDb(path: string, waitMs: number): LockDb {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  sqlite ??= require('better-sqlite3') as typeof sqlite;
  return new sqlite!(path, { timeout: waitMs });
}

/** The time stored by claimTurn, or null (never taken, or unreadable). */
function readTurn(path: string): number | null {
  try {
    const at = (JSON.parse(readFileSync(path, 'utf8')) as { at?: unknown }).at;
    return typeof at === 'number' && Number.isFinite(at) ? at : null;
  } catch {
    return null;
  }
}

function readState(path: string): HookSessionState {
  try {
    return parseHookSessionState(readFileSync(path, 'utf8'));
  } catch {
    return parseHookSessionState(null);
  }
}
