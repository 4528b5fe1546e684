import type { Typed } from '@engram/contracts';
import { errorMessage, parseHookSessionState, uuidV5, type HookSessionState } from '@engram/core';
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';

// The local files of `engram hook` (docs/claude-code-hooks.md), under `<data-dir>/spool/`:
//   pending.jsonl    events that could not be published, one JSON line each, appended atomically
//   draining.jsonl   the batch a drainer took from pending.jsonl (older than anything pending)
//   rejected.jsonl   spooled lines that are not events any more (kept, never dropped silently)
//   .drain.lock      held while one process drains (stale after DEFAULT_STALE_LOCK_MS)
//   sessions/<id>.json      the per-session counters (promptId, stepIndex, …)
//   sessions/<id>.json.lock held while one hook process updates them
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
    mkdirSync(this.dir, { recursive: true });
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
    mkdirSync(this.dir, { recursive: true });
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
 * `<spool>/sessions/`. `update` is a read-modify-write under a lock file, so two hooks of one
 * session running at once (parallel tool calls) never hand out the same promptId or stepIndex.
 */
export class HookSessionStore {
  readonly dir: string;

  constructor(
    spoolDir: string,
    private readonly options: { lockWaitMs?: number; staleLockMs?: number } = {},
  ) {
    this.dir = join(spoolDir, 'sessions');
  }

  pathOf(sessionId: string): string {
    const safe = /^[A-Za-z0-9_-]{1,100}$/.test(sessionId) ? sessionId : uuidV5(sessionId);
    return join(this.dir, `${safe}.json`);
  }

  read(sessionId: string): HookSessionState {
    const path = this.pathOf(sessionId);
    return parseHookSessionState(existsSync(path) ? readFileSync(path, 'utf8') : null);
  }

  /**
   * Runs `change` on the session's state and stores what it returns (atomically: temp + rename).
   * The lock is waited for at most `lockWaitMs` (default 150); a lock older than `staleLockMs`
   * (default 2 s) is broken. If it still cannot be had, the update runs unlocked and says so in
   * `warning`: counting on is better than blocking the agent.
   */
  update<T>(
    sessionId: string,
    change: (state: HookSessionState) => { state: HookSessionState; value: T },
  ): { value: T; warning: string | null } {
    mkdirSync(this.dir, { recursive: true });
    const path = this.pathOf(sessionId);
    const lock = `${path}.lock`;
    const locked = acquireLock(
      lock,
      this.options.lockWaitMs ?? 150,
      this.options.staleLockMs ?? 2_000,
    );
    try {
      const current = parseHookSessionState(existsSync(path) ? readFileSync(path, 'utf8') : null);
      const { state, value } = change(current);
      const temporary = `${path}.${process.pid}.tmp`;
      writeDurably(temporary, JSON.stringify(state));
      renameSync(temporary, path);
      return {
        value,
        warning: locked ? null : `session state ${path} was locked; updated without the lock`,
      };
    } finally {
      if (locked) {
        try {
          unlinkSync(lock);
        } catch {
          // Broken as stale by another process.
        }
      }
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

const sleeper = new Int32Array(new SharedArrayBuffer(4));

/** Spins on a lock file, sleeping 5 ms between tries, for at most `waitMs`. */
function acquireLock(path: string, waitMs: number, staleMs: number): boolean {
  const deadline = Date.now() + waitMs;
  for (;;) {
    if (createLockFile(path)) return true;
    if (isStale(path, staleMs)) {
      try {
        unlinkSync(path);
      } catch {
        // Someone else broke it first.
      }
      continue;
    }
    if (Date.now() >= deadline) return false;
    Atomics.wait(sleeper, 0, 0, 5);
  }
}
