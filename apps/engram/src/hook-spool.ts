import type { Typed } from '@engram/contracts';
import { uuidV5 } from '@engram/core';
import { existsSync, lstatSync, mkdirSync, readFileSync, renameSync, unlinkSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { appendDurably, createLockFile, hasContent, isStale, writeDurably } from './durable-files';

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
