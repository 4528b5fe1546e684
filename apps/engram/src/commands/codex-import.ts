import type { Typed } from '@engram/contracts';
import {
  CODEX_AGENT_KIND,
  CodexSessionReader,
  mapCodexSession,
  mapCodexSteps,
  newHookSessionState,
  type CodexCounts,
  type HookProject,
  type HookSessionState,
  type TranscriptLineError,
} from '@engram/core';
import {
  closeSync,
  existsSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { HookIdentity } from './hook.command';
import {
  publishImported,
  readLogFiles,
  transcriptFiles,
  transcriptProject,
  type ImportPublishing,
} from './import-sessions';
import { REPLAY_EXIT, type ReplaySummary } from './replay.command';

// `engram import --codex-sessions DIR [--follow]` (issue #22, docs/claude-code-hooks.md
// "Codex CLI sessions"): Codex CLI's rollout files (~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl)
// → Engram events through the hook's mapping (libs/core/src/hooks/codex-session.ts), published
// like the Claude Code import (ledger, dead-lettered bad lines, --wait). With --follow the files
// are polled and what they gain is published as it comes.

/** Where --follow keeps each rollout's read offset (in the data directory, by imports.db). */
export const CODEX_FOLLOW_STATE_FILE = 'codex-follow.json';

export interface CodexImportRun extends ImportPublishing {
  /** A rollout file or a directory of them (e.g. ~/.codex/sessions). */
  path: string;
  identity: HookIdentity;
}

export interface CodexImportSummary extends ReplaySummary, CodexCounts {
  files: number;
  sessions: number;
  /** Events an earlier import published already (not published again). */
  alreadyImported: number;
}

/** Reads, maps and publishes every rollout under `run.path`. */
export async function runCodexImport(run: CodexImportRun): Promise<CodexImportSummary> {
  const files = transcriptFiles(run.path);
  const reader = readLogFiles(new CodexSessionReader(), files, run.progress);
  const sessions = reader.sessions();
  const identity = codexIdentity(run.identity);
  const perSession = sessions.map((session) =>
    mapCodexSession(session, transcriptProject(session, identity)),
  );
  const summary = await publishImported(run, perSession, reader.errors);
  return { ...summary, ...reader.counts(), files: files.length, sessions: sessions.length };
}

export function formatCodexImport(summary: CodexImportSummary): string {
  return (
    `${summary.files} rollout file(s), ${summary.sessions} session(s): ` +
    `${summary.published} event(s) published, ${summary.alreadyImported} imported before, ` +
    `${summary.rejected} line(s) rejected to the dead-letter topic, ${summary.unknown} ` +
    `line(s) of unknown types skipped, ${summary.unpaired} tool call(s) without a result` +
    (summary.caughtUp === true ? '; every event processed' : '')
  );
}

/** The agent is Codex unless --agent says otherwise. */
function codexIdentity(identity: HookIdentity): HookIdentity {
  return { ...identity, agent: identity.agent?.trim() || CODEX_AGENT_KIND };
}

export interface CodexFollowRun extends CodexImportRun {
  /** The offsets file (CODEX_FOLLOW_STATE_FILE in the data directory). */
  statePath: string;
  /** A session ends (SessionEnded) once its file has not changed for this long. */
  idleEndMs: number;
  /** The clock (tests). */
  now?: () => number;
}

/** What one poll did. */
export interface CodexPoll {
  /** Rollout files that gained complete lines. */
  grown: number;
  published: number;
  rejected: number;
  alreadyImported: number;
  /** Sessions whose end was published (their file went quiet). */
  ended: number;
}

/** What the offsets file keeps per rollout: bytes read (whole lines), and whether it ended. */
interface SavedFile {
  offset: number;
  ended: boolean;
}

/** A rollout being followed: its reader and the hook state its mapped steps left. */
interface FollowedFile extends SavedFile {
  reader: CodexSessionReader;
  /** Lines read (numbers the next ones in errors). */
  lines: number;
  /** Steps mapped (SessionStart included, the SessionEnd never). */
  mapped: number;
  state: HookSessionState;
  project: HookProject | null;
  /** Bad lines already reported. */
  reported: number;
}

/**
 * Follows a directory of rollouts: each poll reads what the files gained since the last one —
 * complete lines only, a partial last line waits — maps the new steps with the state the earlier
 * ones left (the same events and ids as a one-off import of the file), and publishes them. A
 * session's SessionEnded is published once its file has been quiet for `idleEndMs`; mapped with
 * a copy of the state, so a session that goes on later ends again under the same id, which the
 * ledger then skips, unless it compacted in between.
 *
 * The offsets are saved after each publish: after a restart, a file that did not change is not
 * read again; one that grew is read up to its saved offset to rebuild the session's counters
 * (nothing published), then from there. A crash between publishing and saving re-reads those
 * lines, and the ledger skips their events.
 */
export class CodexFollower {
  private readonly followed = new Map<string, FollowedFile>();
  private readonly saved: Record<string, SavedFile>;

  constructor(private readonly run: CodexFollowRun) {
    this.saved = loadOffsets(run.statePath);
  }

  async poll(): Promise<CodexPoll> {
    const now = this.run.now?.() ?? Date.now();
    const perSession: Typed[][] = [];
    const rejected: TranscriptLineError[] = [];
    let grown = 0;
    let ended = 0;
    for (const file of existsSync(this.run.path) ? transcriptFiles(this.run.path) : []) {
      const stat = statSync(file, { throwIfNoEntry: false });
      if (!stat) continue;
      let followed = this.followed.get(file);
      const saved = this.saved[file];
      if (!followed && saved?.offset === stat.size && saved.ended) continue;
      if (!followed || stat.size < followed.offset) {
        // New to this process, or rewritten (smaller than what was read): read from its start.
        followed = this.open(file, followed ? undefined : saved);
        this.followed.set(file, followed);
      }
      const events: Typed[] = [];
      if (stat.size > followed.offset && this.readNew(file, followed, stat.size)) {
        grown += 1;
        followed.ended = false;
        events.push(...this.mapNew(followed));
        rejected.push(...followed.reader.errors.slice(followed.reported));
        followed.reported = followed.reader.errors.length;
      }
      if (!followed.ended && now - stat.mtimeMs >= this.run.idleEndMs) {
        const end = this.end(followed);
        if (end.length > 0) ended += 1;
        events.push(...end);
        followed.ended = true;
      }
      if (events.length > 0) perSession.push(events);
      if (followed.ended) {
        // Ended: its reader goes; should the file grow again, it is read again from disk.
        this.saved[file] = { offset: followed.offset, ended: true };
        this.followed.delete(file);
      }
    }
    const published =
      perSession.length > 0 || rejected.length > 0
        ? await publishImported(this.run, perSession, rejected)
        : { published: 0, rejected: 0, alreadyImported: 0 };
    this.saveOffsets();
    return {
      grown,
      published: published.published,
      rejected: published.rejected,
      alreadyImported: published.alreadyImported,
      ended,
    };
  }

  /** A file to follow; what an earlier run read of it is read again, silently. */
  private open(file: string, saved: SavedFile | undefined): FollowedFile {
    const followed: FollowedFile = {
      reader: new CodexSessionReader(),
      offset: 0,
      ended: false,
      lines: 0,
      mapped: 0,
      state: newHookSessionState(),
      project: null,
      reported: 0,
    };
    if (saved !== undefined && saved.offset > 0 && this.readNew(file, followed, saved.offset)) {
      if (followed.offset === saved.offset) {
        this.mapNew(followed);
        followed.reported = followed.reader.errors.length;
        followed.ended = saved.ended;
      } else {
        // The file no longer has a line end where the offset says: read it all again.
        return this.open(file, undefined);
      }
    }
    return followed;
  }

  /** Reads the complete lines between the file's offset and `size`; false when there are none. */
  private readNew(file: string, followed: FollowedFile, size: number): boolean {
    const bytes = readRange(file, followed.offset, size);
    const end = bytes.lastIndexOf(0x0a);
    if (end < 0) return false;
    const text = bytes.subarray(0, end + 1).toString('utf8');
    followed.reader.read(text, file, followed.lines + 1);
    followed.lines += text.split('\n').length - 1;
    followed.offset += end + 1;
    return true;
  }

  /** The events of the steps read since the last call (the SessionEnd is not among them). */
  private mapNew(followed: FollowedFile): Typed[] {
    const [session] = followed.reader.sessions();
    if (session === undefined) return [];
    followed.project ??= transcriptProject(session, codexIdentity(this.run.identity));
    const steps = session.steps.slice(followed.mapped, -1);
    const { events, state } = mapCodexSteps(steps, followed.state, followed.project);
    followed.state = state;
    followed.mapped = session.steps.length - 1;
    return events;
  }

  /** The session's SessionEnded, mapped with a copy of its state. */
  private end(followed: FollowedFile): Typed[] {
    const [session] = followed.reader.sessions();
    if (session === undefined || followed.project === null) return [];
    return mapCodexSteps(session.steps.slice(-1), followed.state, followed.project).events;
  }

  private saveOffsets(): void {
    for (const [file, followed] of this.followed) {
      this.saved[file] = { offset: followed.offset, ended: followed.ended };
    }
    const temporary = `${this.run.statePath}.tmp`;
    writeFileSync(temporary, JSON.stringify({ version: 1, files: this.saved }), { mode: 0o600 });
    renameSync(temporary, this.run.statePath);
  }
}

export interface CodexFollowTotals extends Omit<CodexPoll, 'grown'> {
  polls: number;
}

/** Polls until `signal` aborts (the poll under way finishes first). */
export async function followCodexSessions(
  run: CodexFollowRun,
  options: { signal: AbortSignal; pollMs: number; onPoll?: (poll: CodexPoll) => void },
): Promise<CodexFollowTotals> {
  const follower = new CodexFollower(run);
  const totals: CodexFollowTotals = {
    polls: 0,
    published: 0,
    rejected: 0,
    alreadyImported: 0,
    ended: 0,
  };
  while (!options.signal.aborted) {
    const poll = await follower.poll();
    totals.polls += 1;
    totals.published += poll.published;
    totals.rejected += poll.rejected;
    totals.alreadyImported += poll.alreadyImported;
    totals.ended += poll.ended;
    options.onPoll?.(poll);
    await sleep(options.pollMs, undefined, { signal: options.signal }).catch(() => undefined);
  }
  return totals;
}

/**
 * `--follow`: follows until SIGINT or SIGTERM, printing what each poll published; the exit code
 * (3 when lines were rejected, else 0).
 */
export async function followCodexCommand(run: CodexFollowRun, json: boolean): Promise<number> {
  const stop = new AbortController();
  const abort = () => stop.abort();
  process.once('SIGINT', abort);
  process.once('SIGTERM', abort);
  console.error(`following ${run.path} (Ctrl-C stops)`);
  try {
    const totals = await followCodexSessions(run, {
      signal: stop.signal,
      pollMs: 1_000,
      onPoll: (poll) => {
        if (poll.published === 0 && poll.rejected === 0 && poll.ended === 0) return;
        console.log(json ? JSON.stringify(poll) : formatCodexPoll(poll));
      },
    });
    console.log(json ? JSON.stringify(totals) : formatCodexFollow(totals));
    return totals.rejected > 0 ? REPLAY_EXIT.rejectedLines : REPLAY_EXIT.ok;
  } finally {
    process.off('SIGINT', abort);
    process.off('SIGTERM', abort);
  }
}

export function formatCodexPoll(poll: CodexPoll): string {
  return (
    `${poll.published} event(s) published from ${poll.grown} rollout file(s)` +
    (poll.ended > 0 ? `, ${poll.ended} session(s) ended` : '') +
    (poll.rejected > 0 ? `, ${poll.rejected} line(s) rejected to the dead-letter topic` : '')
  );
}

export function formatCodexFollow(totals: CodexFollowTotals): string {
  return (
    `stopped following: ${totals.published} event(s) published, ${totals.ended} session(s) ` +
    `ended, ${totals.rejected} line(s) rejected to the dead-letter topic`
  );
}

function readRange(file: string, from: number, to: number): Buffer {
  const buffer = Buffer.alloc(Math.max(0, to - from));
  const fd = openSync(file, 'r');
  try {
    let read = 0;
    while (read < buffer.length) {
      const n = readSync(fd, buffer, read, buffer.length - read, from + read);
      if (n === 0) break;
      read += n;
    }
    return buffer.subarray(0, read);
  } finally {
    closeSync(fd);
  }
}

/** The saved offsets; none when the file is missing or unreadable (files are then read again). */
function loadOffsets(path: string): Record<string, SavedFile> {
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as { files?: unknown };
    const files = parsed.files;
    if (typeof files !== 'object' || files === null) return {};
    return Object.fromEntries(
      Object.entries(files as Record<string, Partial<SavedFile>>).filter(
        ([, saved]) =>
          Number.isSafeInteger(saved.offset) &&
          (saved.offset as number) >= 0 &&
          typeof saved.ended === 'boolean',
      ),
    ) as Record<string, SavedFile>;
  } catch {
    return {};
  }
}
