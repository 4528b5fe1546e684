import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

// The hook socket (issue #22): `engram start` listens on `<data-dir>/hook.sock`; `engram hook`
// hands it the hook's payload instead of doing the work in a fresh process. This module is what
// both ends share, and the client's side of it is loaded on every hook: Node built-ins only
// (no @engram/*, no commander), so a hook that finds the service pays for almost nothing.
//
// One connection per hook, newline-delimited JSON, in this order:
//   hook → service  HookSocketRequest            the payload and the hook's options
//   service → hook  {kind:'accepted', ackMs, doneMs} | {kind:'error', message}   nothing done yet
//   hook → service  {kind:'go'}                  from here the service owns the event
//   service → hook  {kind:'ack', published, spooled}   events are in the log (or the spool)
//   service → hook  {kind:'done', stdout, messages}    what the hook prints
// The hook decides alone whether the service does the work: it says `go` only when `accepted`
// came within its handshake budget, else it closes and takes the direct path; a service that
// sees the connection close without `go` does nothing. So a slow service never makes an event
// twice and a dead one never loses it.

export const HOOK_SOCKET_FILE = 'hook.sock';
export const HOOK_SOCKET_VERSION = 1;
/** `engram hook`'s default data directory (the same as `engram start`'s). */
export const DEFAULT_HOOK_DATA_DIR = join(homedir(), '.engram');
/** The longest a hook waits for the service to take its event before going direct. */
export const DEFAULT_HANDSHAKE_MS = 250;

export function hookSocketPath(dataDir: string): string {
  return join(resolve(dataDir), HOOK_SOCKET_FILE);
}

/** `engram hook`'s options as the service needs them (the same names as the command's). */
export interface HookSocketOptions {
  /** Absolute. */
  dataDir: string;
  distributed: boolean;
  budgetMs?: number;
  contextBudgetMs?: number;
  context: boolean;
  tenant?: string;
  project?: string;
  agent?: string;
  user?: string;
}

export interface HookSocketRequest {
  v: number;
  kind: 'hook';
  options: HookSocketOptions;
  /** The hook's stdin: Claude Code's JSON payload. */
  input: string;
  /** The hook's working directory (a payload without an absolute cwd resolves against it). */
  cwd: string;
  /** The hook's ENGRAM_* environment: the service refuses a hook configured differently. */
  env: Record<string, string>;
  /** How long the hook has been running when it asked (its budgets count from its start). */
  elapsedMs: number;
}

export type HookSocketReply =
  /** Taken: the ack comes within `ackMs` of `go`, the answer within `doneMs`. */
  | { kind: 'accepted'; ackMs: number; doneMs: number }
  | { kind: 'error'; message: string }
  | { kind: 'ack'; published: number; spooled: number }
  | { kind: 'done'; stdout: string | null; messages: string[] };

const VALUE_OPTIONS = new Map<string, keyof HookSocketOptions>([
  ['--data-dir', 'dataDir'],
  ['--budget-ms', 'budgetMs'],
  ['--context-budget-ms', 'contextBudgetMs'],
  ['--tenant', 'tenant'],
  ['--project', 'project'],
  ['--agent', 'agent'],
  ['--user', 'user'],
]);

/**
 * The options of `engram hook <args>` (the args after `hook`) when the socket can serve them;
 * null for anything else — `--flush`, `--help`, a bad or unknown option — which the full command
 * handles (and reports) as it always has.
 */
export function hookSocketOptions(args: readonly string[], cwd: string): HookSocketOptions | null {
  const options: HookSocketOptions = {
    dataDir: DEFAULT_HOOK_DATA_DIR,
    distributed: false,
    context: true,
  };
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i];
    if (arg === '--distributed') options.distributed = true;
    else if (arg === '--no-context') options.context = false;
    else {
      const equals = arg.indexOf('=');
      const name = equals > 0 ? arg.slice(0, equals) : arg;
      const key = VALUE_OPTIONS.get(name);
      if (key === undefined) return null;
      const value = equals > 0 ? arg.slice(equals + 1) : args[++i];
      if (value === undefined) return null;
      if (key === 'budgetMs' || key === 'contextBudgetMs') {
        const ms = Number(value);
        if (!Number.isInteger(ms) || ms < 10 || ms > 600_000) return null;
        options[key] = ms;
      } else if (key === 'dataDir') options.dataDir = resolve(cwd, value);
      else if (key === 'tenant' || key === 'project' || key === 'agent' || key === 'user') {
        options[key] = value;
      }
    }
  }
  return options;
}

/** Splits a stream of newline-delimited JSON into parsed messages (a bad line is an error). */
export function lineReader(onMessage: (message: unknown) => void): (chunk: Buffer) => void {
  let buffered = '';
  return (chunk) => {
    buffered += chunk.toString('utf8');
    for (let end = buffered.indexOf('\n'); end >= 0; end = buffered.indexOf('\n')) {
      const line = buffered.slice(0, end);
      buffered = buffered.slice(end + 1);
      if (line.trim() !== '') onMessage(JSON.parse(line));
    }
  };
}
