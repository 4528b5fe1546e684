import type { Typed } from '@engram/contracts';
import {
  errorMessage,
  mergeHookSessionStates,
  newHookSessionState,
  parseHookSessionState,
  uuidV5,
  type HookSessionState,
} from '@engram/core';
import {
  closeSync,
  existsSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

// The local files of `engram hook` (docs/claude-code-hooks.md), under `<data-dir>/spool/`:
//   pending.jsonl    events that could not be published, one JSON line each, appended atomically
//   draining.jsonl   the batch a drainer took from pending.jsonl (older than anything pending)
//   rejected.jsonl   spooled lines that are not events any more (kept, never dropped silently)
//   .drain.lock      held while one process drains (stale after DEFAULT_STALE_LOCK_MS)
//   sessions/<id>.json      the per-session counters (promptId, stepIndex, …)
//   sessions/.lock.db       the lock every counter update holds (a SQLite IMMEDIATE transaction)
// Every file operation here is synchronous on purpose: a hook that runs out of time spools and
// exits at once, and a synchronous append cannot be cut in half by that exit.

/** Publishes events in order; resolves once they are durable. */
export type PublishEvents = (events: Typed[]) => Promise<void>;

export const DEFAULT_STALE_LOCK_MS = 30_000;
/** Events per publish call while draining (a long outage can spool thousands). */
export const DRAIN_BATCH = 500;

export interface DrainResult {
  /** `busy`: another process holds the drain lock; nothing was done. */
  status: 'drained' | 'busy';
  published: number;
  rejected: number;
}

/** The spool of events `engram hook` could not publish in time (JSON lines, oldest first). */
export class HookSpool {
  readonly pendingPath: string;
  readonly drainingPath: string;
  readonly rejectedPath: string;
  private readonly lockPath: string;
  private lockHeld = false;

  constructor(
    readonly dir: string,
    private readonly staleLockMs = DEFAULT_STALE_LOCK_MS,
  ) {
    this.pendingPath = join(dir, 'pending.jsonl');
    this.drainingPath = join(dir, 'draining.jsonl');
    this.rejectedPath = join(dir, 'rejected.jsonl');
    this.lockPath = join(dir, '.drain.lock');
  }

  /**
   * Appends events as JSON lines in ONE write on an O_APPEND descriptor, then fsyncs: concurrent
   * hooks never interleave inside a batch, and a spooled event survives a crash.
   */
  append(events: readonly Typed[]): void {
    if (events.length === 0) return;
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    appendDurably(this.pendingPath, events.map((event) => `${JSON.stringify(event)}\n`).join(''));
  }

  /** True when nothing waits to be published. */
  isEmpty(): boolean {
    return !hasContent(this.drainingPath) && !hasContent(this.pendingPath);
  }

  /** How many events wait (for `engram hook --flush` and the docs' troubleshooting). */
  size(): number {
    return [this.drainingPath, this.pendingPath]
      .map((path) => (hasContent(path) ? linesOf(readFileSync(path, 'utf8')).length : 0))
      .reduce((a, b) => a + b, 0);
  }

  /**
   * Publishes everything spooled, oldest first, then removes it. One drainer at a time (a lock
   * file); others get `busy`. A publish failure throws and leaves the unpublished rest in place,
   * in order, for the next drain; what was published before the failure is not published again.
   */
  async drain(publish: PublishEvents): Promise<DrainResult> {
    const result: DrainResult = { status: 'drained', published: 0, rejected: 0 };
    if (this.isEmpty()) return result;
    if (!this.tryLock()) return { ...result, status: 'busy' };
    try {
      for (;;) {
        if (!existsSync(this.drainingPath)) {
          if (!hasContent(this.pendingPath)) break;
          // Atomic: appends after this point start a new pending.jsonl, younger than this batch.
          renameSync(this.pendingPath, this.drainingPath);
        }
        const { events, bad } = parseSpoolLines(readFileSync(this.drainingPath, 'utf8'));
        if (bad.length > 0) {
          appendDurably(this.rejectedPath, bad.map((line) => `${line}\n`).join(''));
          result.rejected += bad.length;
        }
        let done = 0;
        try {
          while (done < events.length) {
            const batch = events.slice(done, done + DRAIN_BATCH);
            await publish(batch);
            done += batch.length;
            result.published += batch.length;
          }
        } finally {
          if (done < events.length) {
            // Keep only the rest: a later drain does not publish the first part again.
            if (done > 0 || bad.length > 0) this.rewriteDraining(events.slice(done));
          }
        }
        unlinkSync(this.drainingPath);
      }
      return result;
    } finally {
      this.releaseLock();
    }
  }

  /** Lets go of the drain lock (the hook's timeout path calls it before exiting). */
  releaseLock(): void {
    if (!this.lockHeld) return;
    this.lockHeld = false;
    try {
      unlinkSync(this.lockPath);
    } catch {
      // Already gone (broken as stale by another process): nothing to release.
    }
  }

  private tryLock(): boolean {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    if (createLockFile(this.lockPath)) {
      this.lockHeld = true;
      return true;
    }
    if (isStale(this.lockPath, this.staleLockMs)) {
      try {
        unlinkSync(this.lockPath);
      } catch {
        // Someone else broke it first.
      }
      if (createLockFile(this.lockPath)) {
        this.lockHeld = true;
        return true;
      }
    }
    return false;
  }

  private rewriteDraining(events: readonly Typed[]): void {
    const temporary = `${this.drainingPath}.${process.pid}.tmp`;
    writeDurably(temporary, events.map((event) => `${JSON.stringify(event)}\n`).join(''));
    renameSync(temporary, this.drainingPath);
  }
}

/** Spooled lines back into events; lines that are not a typed event object are `bad`. */
export function parseSpoolLines(content: string): { events: Typed[]; bad: string[] } {
  const events: Typed[] = [];
  const bad: string[] = [];
  for (const line of linesOf(content)) {
    try {
      const value: unknown = JSON.parse(line);
      if (
        typeof value === 'object' &&
        value !== null &&
        typeof (value as { type?: unknown }).type === 'string' &&
        typeof (value as { eventId?: unknown }).eventId === 'string'
      ) {
        events.push(value as Typed);
      } else {
        bad.push(line);
      }
    } catch {
      // A torn last line (the disk filled up mid-write) or a hand edit: kept in rejected.jsonl.
      bad.push(line);
    }
  }
  return { events, bad };
}

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

function readState(path: string): HookSessionState {
  try {
    return parseHookSessionState(readFileSync(path, 'utf8'));
  } catch {
    return parseHookSessionState(null);
  }
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Already gone.
  }
}

/**
 * Where the hook keeps events and session counters when `<data-dir>/spool` cannot hold them
 * (unwritable, a file, disk full), in order of preference: `~/.local/state/engram/spool/<key>`,
 * then `<tmpdir>/engram-<uid>/spool/<key>`, `<key>` naming the data dir (so two data dirs never
 * mix). Created 0700. The hook drains them into the data dir's log once it works again.
 */
export function fallbackSpoolDirs(dataDir: string): string[] {
  const key = uuidV5(`engram-spool:${resolve(dataDir)}`).slice(0, 13);
  const uid = typeof process.getuid === 'function' ? process.getuid() : null;
  const shared = join(tmpdir(), `engram-${uid ?? 'user'}`);
  return [
    join(homedir(), '.local', 'state', 'engram', 'spool', key),
    ...(isForeign(shared, uid) ? [] : [join(shared, 'spool', key)]),
  ];
}

/**
 * True when `dir` exists but is not a private directory of this user (a symlink, someone else's,
 * or open to others): in a shared tmpdir another user could have made it to read the events.
 */
function isForeign(dir: string, uid: number | null): boolean {
  let stat;
  try {
    stat = lstatSync(dir);
  } catch {
    return false; // Not there yet: created 0700 when needed.
  }
  return !stat.isDirectory() || (uid !== null && stat.uid !== uid) || (stat.mode & 0o077) !== 0;
}

function linesOf(content: string): string[] {
  return content.split('\n').filter((line) => line.trim() !== '');
}

function hasContent(path: string): boolean {
  try {
    return statSync(path).size > 0;
  } catch {
    return false;
  }
}

function appendDurably(path: string, text: string): void {
  const fd = openSync(path, 'a');
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function writeDurably(path: string, text: string): void {
  const fd = openSync(path, 'w');
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function createLockFile(path: string): boolean {
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

function isStale(path: string, staleMs: number): boolean {
  try {
    return Date.now() - statSync(path).mtimeMs > staleMs;
  } catch {
    return true;
  }
}
