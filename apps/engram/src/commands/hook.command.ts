import { loadConfig, type EngramConfig } from '@engram/config';
import {
  envelopeProblems,
  eventKey,
  fromAvroValue,
  loadAvroSchema,
  topicOfRecord,
  topicSpec,
  toAvroValue,
  TOPICS,
  type TopicName,
  type Typed,
} from '@engram/contracts';
import {
  CLAUDE_CODE_AGENT_KIND,
  errorMessage,
  FILE_MANIFEST_GIT_ARGS,
  hookCommitCommand,
  hookCommitMade,
  hookContextOutput,
  withPendingReviewLine,
  hookFileManifest,
  LAST_COMMIT_GIT_ARGS,
  mapClaudeCodeHook,
  parseClaudeCodeHookPayload,
  parseFileManifest,
  parseLastCommit,
  type ClaudeCodeHookPayload,
  type GitCommitInvocation,
  type HookMemoryRequest,
  type HookProject,
  type TopicCodec,
} from '@engram/core';
import { InvalidArgumentError, type Command } from 'commander';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { fallbackSpoolDirs, HookSessionStore, HookSpool, type PublishEvents } from '../hook-spool';
import { DEFAULT_HOOK_DATA_DIR } from '../hook-socket-protocol';

// `engram hook` (issue #7, docs/claude-code-hooks.md): one Claude Code hook event on stdin →
// the Engram events on the log, fail-open within a hard time budget, with a local spool for what
// could not be published; and on SessionStart / UserPromptSubmit / PreToolUse(Read, Edit, …)
// the recalled memory printed back as Claude Code's `additionalContext`.
//
// Imports are kept light on purpose (no Kafka client, no retrieval stack at load time): the hook
// is a fresh process for every event, so whatever this module loads is paid on every tool call.

export const DEFAULT_HOOK_BUDGET_MS = 300;
/** `--flush` has no agent waiting on it. */
export const DEFAULT_FLUSH_BUDGET_MS = 60_000;
/**
 * Memory context (SessionStart, UserPromptSubmit, PreToolUse on files). In-process embedded
 * recall loads the retrieval stack first (~0.4-0.7 s cold on 2 cores, synchronous module loading
 * that no timer can cut short), so it gets its own bound; in distributed mode it is the gRPC
 * deadline of BuildContext / InjectForFile on the running recall server.
 */
export const DEFAULT_CONTEXT_BUDGET_MS = 1_500;
/** The longest wait for stdin's end (Claude Code closes it right after writing the payload). */
export const STDIN_WAIT_MS = 5_000;
/** Session counter files untouched this long are removed at a SessionStart. */
export const SESSION_STATE_MAX_AGE_MS = 30 * 24 * 60 * 60 * 1000;
/** `engram bootstrap`'s default tenant (DEFAULT_BOOTSTRAP_TENANT), so both meet without flags. */
export const DEFAULT_HOOK_TENANT = 'default';
const DEFAULT_DATA_DIR = DEFAULT_HOOK_DATA_DIR;
/**
 * The one `git log` of a hook whose Bash call made a commit (its CommitMade, issue #20). It runs
 * before publishing and does not count against the publishing budget.
 */
export const GIT_LOG_TIMEOUT_MS = 2_000;
/**
 * `git ls-files` at SessionStart (the FileManifest, issue #20): at most this long and this much
 * output (about 200k paths); over either, no manifest, one line on stderr. Not counted against
 * the publishing budget either.
 */
export const GIT_LS_FILES_TIMEOUT_MS = 2_000;
export const GIT_LS_FILES_MAX_BYTES = 16 * 1024 * 1024;
/** Longest additionalContext printed (Claude Code adds it to the model's context). */
const MAX_CONTEXT_CHARS = 4_000;
/** The longest the distributed review count may take at SessionStart. */
const REVIEW_COUNT_MAX_MS = 500;
/** Room kept after SessionStart's context for the review reminder (pendingReviewLine). */
const REVIEW_LINE_CHARS = 200;

/** Where events go: the embedded log or Kafka. */
export interface HookPublisher {
  publish: PublishEvents;
  close(): Promise<void>;
}

export interface HookScope {
  tenantId: string;
  projectId: string;
  sessionId: string;
}

/**
 * Memory back into the session: BuildContext and InjectForFile of the Recall API
 * (schemas/proto/engram/recall/v1/recall.proto), embedded mode answering in process on the local
 * retrieval store (embeddedHookMemory), distributed mode over gRPC (grpcHookMemory). Each
 * returns ready-to-print text, or '' for nothing.
 */
export interface HookMemory {
  buildContext(scope: HookScope, query: string | null): Promise<string>;
  injectForFile(scope: HookScope, filePath: string, toolName: string): Promise<string>;
  /**
   * How many MEMORY.md proposals of the project await review (`engram review` lists them),
   * asked at SessionStart only; absent: none are mentioned.
   */
  pendingReviews?(scope: HookScope): Promise<number>;
  close(): Promise<void>;
}

export interface HookRun {
  /** The hook's stdin. */
  input: string;
  /** Publishing (or spooling) is over by then. */
  budgetMs: number;
  /**
   * Memory context is given up by then (from the start; at least budgetMs). Recall runs after
   * publishing, so this only ever costs context, never events.
   */
  contextBudgetMs?: number;
  spool: HookSpool;
  /**
   * Where events go when `spool` cannot take them (the data dir is unwritable, a file, or the
   * disk is full), in order; drained like `spool` once the log can be reached.
   */
  fallbackSpools?: readonly HookSpool[];
  sessions: HookSessionStore;
  /** Tenant, project, root and git facts for the payload's cwd. */
  project(cwd: string | undefined): HookProject;
  openPublisher(): Promise<HookPublisher>;
  /**
   * Absent, or resolving to null: no context is printed. `deadline` (epoch ms) is when context
   * is given up: a remote source passes it on as its call deadline.
   */
  openMemory?: (deadline: number) => Promise<HookMemory | null>;
  /**
   * `git <args>` in `directory`, its stdout (default: the git executable, no shell, killed at
   * `timeoutMs`). Only called after a Bash call that made a commit.
   */
  git?: (
    directory: string,
    args: readonly string[],
    timeoutMs: number,
    maxBytes?: number,
  ) => Promise<string>;
  now?: () => number;
  /**
   * Called once the events are in the log or the spool (or could not be spooled anywhere),
   * before any recall; not called when the input could not be mapped (nothing was delivered).
   */
  onDelivered?: (outcome: HookOutcome) => void;
}

export interface HookOutcome {
  /** What to print on stdout for Claude Code (its JSON output), or null for nothing. */
  stdout: string | null;
  /** Messages for stderr (Claude Code shows them in verbose mode only, with exit code 0). */
  messages: string[];
  hookEventName: string | null;
  published: number;
  drained: number;
  spooled: number;
  timedOut: boolean;
}

type Settled<T> = { ok: true; value: T } | { ok: false; timedOut: boolean; error: string };

/** Resolves by the deadline whatever `work` does (the work itself is abandoned, not stopped). */
async function within<T>(work: () => Promise<T>, deadline: number): Promise<Settled<T>> {
  const remaining = deadline - Date.now();
  if (remaining <= 0) return { ok: false, timedOut: true, error: 'time budget spent' };
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<Settled<T>>((resolve) => {
    timer = setTimeout(
      () => resolve({ ok: false, timedOut: true, error: 'time budget spent' }),
      remaining,
    );
  });
  const attempt = (async (): Promise<Settled<T>> => {
    try {
      return { ok: true, value: await work() };
    } catch (error) {
      return { ok: false, timedOut: false, error: errorMessage(error) };
    }
  })();
  try {
    return await Promise.race([attempt, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Runs one hook. Never throws and never waits past the budget (plus whatever a synchronous step
 * holds the event loop for): malformed input, an unreachable log, a slow recall — each ends in a
 * message and, for events, the spool. The caller exits 0 whatever comes back.
 */
export async function runHook(run: HookRun): Promise<HookOutcome> {
  const now = run.now ?? Date.now;
  const started = Date.now();
  const outcome: HookOutcome = {
    stdout: null,
    messages: [],
    hookEventName: null,
    published: 0,
    drained: 0,
    spooled: 0,
    timedOut: false,
  };
  let events: Typed[];
  let memory: HookMemoryRequest | null;
  let scope: HookScope;
  let payload: ClaudeCodeHookPayload;
  let project: HookProject;
  try {
    payload = parseClaudeCodeHookPayload(run.input);
    outcome.hookEventName = payload.hook_event_name;
    project = run.project(payload.cwd);
    const { value, warning } = run.sessions.update(payload.session_id, (previous, locked) => {
      // Not under the lock: nothing is stored, and counter-based ids are made unique.
      const idSalt = locked ? undefined : `${process.pid}:${Date.now()}:${Math.random()}`;
      const mapping = mapClaudeCodeHook(payload, previous, project, now(), { idSalt });
      return { state: mapping.state, value: mapping };
    });
    if (warning) outcome.messages.push(warning);
    if (payload.hook_event_name === 'SessionStart') {
      run.sessions.prune(SESSION_STATE_MAX_AGE_MS);
    }
    events = value.events;
    memory = value.memory;
    scope = {
      tenantId: project.tenantId,
      projectId: project.projectId,
      sessionId: payload.session_id,
    };
  } catch (error) {
    outcome.messages.push(`engram hook: ${errorMessage(error)}; nothing published`);
    return outcome;
  }

  // A Bash call that made a commit: its CommitMade after the call (only then is git run).
  const commitCommand = hookCommitCommand(payload);
  const gitStarted = Date.now();
  if (commitCommand) {
    const commit = await commitMadeBy(run, payload, project, commitCommand, events);
    if (commit.event) events = [...events, commit.event];
    if (commit.message) outcome.messages.push(commit.message);
  }
  // A session's start: the project's tracked files, against which the observer sweeps memories.
  const sessionStarted = events.find((event) => event.type === 'SessionStarted');
  if (sessionStarted) {
    const manifest = await fileManifestAt(run, payload, project, sessionStarted.timestamp);
    if (manifest.event) events = [...events, manifest.event];
    if (manifest.message) outcome.messages.push(manifest.message);
  }
  const deadline = started + run.budgetMs + (Date.now() - gitStarted);

  // Events first: they are in the log or the spool before any recall starts, so a slow recall
  // can cost the agent context, never events.
  await deliver(run, events, deadline, outcome);
  run.onDelivered?.(outcome);
  const contextDeadline = started + Math.max(run.budgetMs, run.contextBudgetMs ?? 0);
  const context =
    memory && run.openMemory
      ? await recallWithin(run.openMemory, memory, scope, contextDeadline, outcome)
      : '';
  if (memory && context) {
    outcome.stdout = hookContextOutput(memory.hookEventName, truncate(context, MAX_CONTEXT_CHARS));
  }
  return outcome;
}

/**
 * The CommitMade of the commit a Bash call made: HEAD's commit from `git log` in the payload's
 * cwd (or the command's `git -C` directory when it is in the same project), with the tool call's
 * event time. Nothing, and a message for stderr, when git fails, is slow, or HEAD's commit is
 * older than the call; the hook goes on with its other events either way.
 */
async function commitMadeBy(
  run: HookRun,
  payload: ClaudeCodeHookPayload,
  project: HookProject,
  command: GitCommitInvocation,
  events: readonly Typed[],
): Promise<{ event: Typed | null; message: string | null }> {
  const call = events.find((event) => event.type === 'ToolCallObserved');
  if (call === undefined) return { event: null, message: null };
  const cwd = resolve(payload.cwd && isAbsolute(payload.cwd) ? payload.cwd : process.cwd());
  const directory = command.directory === null ? cwd : resolve(cwd, command.directory);
  // `git -C elsewhere commit`: a commit of another project is not this project's.
  if (directory !== cwd && run.project(directory).projectRoot !== project.projectRoot) {
    return { event: null, message: null };
  }
  try {
    const git = run.git ?? runGit;
    const output = await git(directory, LAST_COMMIT_GIT_ARGS, GIT_LOG_TIMEOUT_MS);
    const event = hookCommitMade(payload, project, parseLastCommit(output), call.timestamp);
    return { event, message: null };
  } catch (error) {
    return {
      event: null,
      message: `engram hook: no CommitMade for git ${command.subcommand} (${errorMessage(error)})`,
    };
  }
}

/**
 * The FileManifest of a session's start: `git ls-files` in the project root (the git top level,
 * so a session started in a subdirectory still lists the whole project), with the SessionStarted
 * event's time. Nothing outside a git repository or before the first commit; nothing, and a
 * message for stderr, when git fails, is slow, or lists more than GIT_LS_FILES_MAX_BYTES (a
 * partial list would stale memories whose files exist).
 */
async function fileManifestAt(
  run: HookRun,
  payload: ClaudeCodeHookPayload,
  project: HookProject,
  timestamp: number,
): Promise<{ event: Typed | null; message: string | null }> {
  if (project.gitHeadSha === null || project.projectRoot === null) {
    return { event: null, message: null };
  }
  try {
    const git = run.git ?? runGit;
    const output = await git(
      project.projectRoot,
      FILE_MANIFEST_GIT_ARGS,
      GIT_LS_FILES_TIMEOUT_MS,
      GIT_LS_FILES_MAX_BYTES,
    );
    const event = hookFileManifest(payload, project, parseFileManifest(output), timestamp);
    return { event, message: null };
  } catch (error) {
    return { event: null, message: `engram hook: no FileManifest (${errorMessage(error)})` };
  }
}

/** `git <args>` in `directory`: no shell, bounded time and output, stdout or a rejection. */
export function runGit(
  directory: string,
  args: readonly string[],
  timeoutMs: number,
  maxBytes = 4 * 1024 * 1024,
): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    execFile(
      'git',
      ['-C', directory, ...args],
      {
        encoding: 'utf8',
        timeout: timeoutMs,
        killSignal: 'SIGKILL',
        maxBuffer: maxBytes,
        windowsHide: true,
      },
      (error, stdout, stderr) => {
        if (error) {
          const detail = String(stderr).trim().split('\n')[0];
          reject(new Error(detail ? `${error.message.split('\n')[0]}: ${detail}` : error.message));
        } else resolvePromise(stdout);
      },
    );
  });
}

/**
 * Spooled events first (oldest first), then this hook's; whatever is not published by the
 * deadline is spooled (this hook's events after the older spooled ones: order is kept).
 */
async function deliver(
  run: HookRun,
  events: Typed[],
  deadline: number,
  outcome: HookOutcome,
): Promise<void> {
  const fallbacks = run.fallbackSpools ?? [];
  // The fallbacks first: they hold what arrived while the data dir was unusable.
  const spools = [...fallbacks, run.spool];
  const waitingSpools = spools.filter((spool) => !spool.isEmpty());
  const spoolWaiting = waitingSpools.length > 0;
  if (events.length === 0 && !spoolWaiting) return;
  let publisher: HookPublisher | null = null;
  let sent = false;
  try {
    const opened = await within(() => run.openPublisher(), deadline);
    if (!opened.ok) return fail(opened);
    publisher = opened.value;
    const open = publisher;
    for (const waiting of waitingSpools) {
      const drained = await within(() => waiting.drain(open.publish), deadline);
      if (!drained.ok) return fail(drained);
      outcome.drained += drained.value.published;
      if (drained.value.rejected > 0) {
        outcome.messages.push(
          `engram hook: ${drained.value.rejected} unreadable spool line(s) moved to ${waiting.rejectedPath}`,
        );
      }
      // Another process is draining: publishing now would overtake its older events.
      if (drained.value.status === 'busy' || !waiting.isEmpty()) {
        spool();
        return;
      }
    }
    if (events.length === 0) return;
    const published = await within(() => open.publish(events), deadline);
    if (!published.ok) return fail(published);
    sent = true;
    outcome.published = events.length;
  } finally {
    if (!sent) for (const each of spools) each.releaseLock();
    if (publisher) {
      const closing = publisher;
      await within(() => closing.close(), deadline);
    }
  }

  /** Spools this hook's events; the directory they went to, or null when none could take them. */
  function spool(): string | null {
    if (events.length === 0) return null;
    const problems: string[] = [];
    for (const each of [run.spool, ...fallbacks]) {
      try {
        each.append(events);
        outcome.spooled = events.length;
        if (each !== run.spool) {
          outcome.messages.push(
            `engram hook: ${run.spool.dir} is not usable (${problems.join('; ')}); ` +
              `${events.length} event(s) spooled in ${each.dir} instead, published once the ` +
              `data dir works again (the next hook, or engram hook --flush)`,
          );
        }
        return each.dir;
      } catch (error) {
        problems.push(errorMessage(error));
      }
    }
    outcome.messages.push(
      `engram hook: could not spool ${events.length} event(s) anywhere ` +
        `(${[run.spool, ...fallbacks].map((each) => each.dir).join(', ')}): ${problems.join('; ')}`,
    );
    return null;
  }

  function fail(settled: Extract<Settled<unknown>, { ok: false }>): void {
    if (settled.timedOut) outcome.timedOut = true;
    const where = spool();
    if (where === null) return;
    outcome.messages.push(
      `engram hook: ${settled.timedOut ? `no answer within ${run.budgetMs} ms` : settled.error}; ` +
        `${events.length} event(s) spooled in ${where}, published by the next hook`,
    );
  }
}

async function recallWithin(
  openMemory: (deadline: number) => Promise<HookMemory | null>,
  request: HookMemoryRequest,
  scope: HookScope,
  deadline: number,
  outcome: HookOutcome,
): Promise<string> {
  let memory: HookMemory | null = null;
  const answer = await within(async () => {
    memory = await openMemory(deadline);
    if (memory === null) return '';
    if (request.kind === 'file') {
      return memory.injectForFile(scope, request.filePath, request.toolName);
    }
    const opened: HookMemory = memory;
    if (request.hookEventName !== 'SessionStart' || !opened.pendingReviews) {
      return opened.buildContext(scope, request.query);
    }
    // The review reminder beside the context (seed 001): a failed count costs only the line.
    const [context, pending] = await Promise.all([
      opened.buildContext(scope, request.query),
      opened.pendingReviews(scope).catch((error: unknown) => {
        outcome.messages.push(`engram hook: no review count (${errorMessage(error)})`);
        return 0;
      }),
    ]);
    return withPendingReviewLine(truncate(context, MAX_CONTEXT_CHARS - REVIEW_LINE_CHARS), pending);
  }, deadline);
  const opened = memory as HookMemory | null;
  if (opened) await within(() => opened.close(), deadline);
  if (answer.ok) return answer.value;
  if (answer.timedOut) outcome.timedOut = true;
  outcome.messages.push(
    `engram hook: no memory context (${answer.timedOut ? 'recall ran out of time' : answer.error})`,
  );
  return '';
}

/** Drains the spool (`engram hook --flush`), the fallback spools first. */
export async function flushSpool(
  spool: HookSpool | readonly HookSpool[],
  openPublisher: () => Promise<HookPublisher>,
  budgetMs: number,
): Promise<{ drained: number; left: number; error: string | null }> {
  const spools = Array.isArray(spool) ? (spool as readonly HookSpool[]) : [spool as HookSpool];
  const left = () => spools.reduce((sum, each) => sum + each.size(), 0);
  const deadline = Date.now() + budgetMs;
  const opened = await within(openPublisher, deadline);
  if (!opened.ok) return { drained: 0, left: left(), error: opened.error };
  let total = 0;
  try {
    for (const each of spools) {
      const drained = await within(() => each.drain(opened.value.publish), deadline);
      if (!drained.ok) return { drained: total, left: left(), error: drained.error };
      if (drained.value.status === 'busy') {
        return { drained: total, left: left(), error: 'another process is draining the spool' };
      }
      total += drained.value.published;
    }
    return { drained: total, left: left(), error: null };
  } finally {
    for (const each of spools) each.releaseLock();
    await within(() => opened.value.close(), deadline);
  }
}

// ---- project, git ----

export interface HookIdentity {
  tenant?: string;
  project?: string;
  agent?: string;
  user?: string;
}

/**
 * Tenant, project and root of a hook's cwd. The project root is the git top level above `cwd`
 * (the cwd itself outside git); the project id is `--project`, else the root's directory name
 * (what `engram bootstrap` uses); the tenant is `--tenant`, else `default` (bootstrap's default).
 * Git facts are read from `.git` directly (no `git` process within the budget).
 */
export function resolveHookProject(
  cwd: string | undefined,
  identity: HookIdentity = {},
): HookProject {
  const directory = resolve(cwd && isAbsolute(cwd) ? cwd : process.cwd());
  const git = findGitDir(directory);
  const root = git?.root ?? directory;
  const head = git ? readGitHead(git.gitDir) : { branch: null, sha: null };
  return {
    tenantId: identity.tenant?.trim() || DEFAULT_HOOK_TENANT,
    projectId: identity.project?.trim() || basename(root) || 'unknown',
    projectRoot: root,
    agentId: identity.agent?.trim() || CLAUDE_CODE_AGENT_KIND,
    userId: identity.user?.trim() || null,
    gitBranch: head.branch,
    gitHeadSha: head.sha,
  };
}

function findGitDir(start: string): { root: string; gitDir: string } | null {
  for (let directory = start; ; directory = dirname(directory)) {
    const dotGit = join(directory, '.git');
    try {
      const stat = statSync(dotGit);
      if (stat.isDirectory()) return { root: directory, gitDir: dotGit };
      // A worktree or submodule: `.git` is a file naming the real git directory.
      const match = /^gitdir:\s*(.+)$/m.exec(readFileSync(dotGit, 'utf8'));
      if (match) return { root: directory, gitDir: resolve(directory, match[1].trim()) };
    } catch {
      // No .git here.
    }
    if (dirname(directory) === directory) return null;
  }
}

function readGitHead(gitDir: string): { branch: string | null; sha: string | null } {
  try {
    const head = readFileSync(join(gitDir, 'HEAD'), 'utf8').trim();
    const ref = /^ref:\s*(refs\/heads\/(.+))$/.exec(head);
    if (!ref) return { branch: null, sha: /^[0-9a-f]{40,64}$/.test(head) ? head : null };
    return { branch: ref[2], sha: readRef(gitDir, ref[1]) };
  } catch {
    return { branch: null, sha: null };
  }
}

function readRef(gitDir: string, ref: string): string | null {
  // In a worktree, branch refs live in the common directory.
  const common = existsSync(join(gitDir, 'commondir'))
    ? resolve(gitDir, readFileSync(join(gitDir, 'commondir'), 'utf8').trim())
    : gitDir;
  for (const dir of [gitDir, common]) {
    try {
      const sha = readFileSync(join(dir, ref), 'utf8').trim();
      if (/^[0-9a-f]{40,64}$/.test(sha)) return sha;
    } catch {
      // Not a loose ref here.
    }
  }
  try {
    for (const line of readFileSync(join(common, 'packed-refs'), 'utf8').split('\n')) {
      const [sha, name] = line.trim().split(' ');
      if (name === ref && /^[0-9a-f]{40,64}$/.test(sha)) return sha;
    }
  } catch {
    // No packed refs.
  }
  return null;
}

// ---- publishers ----

/**
 * The contract codec of an agent topic under the configured prefix, built from
 * @engram/contracts alone. Same fields as libs/kafka's contractCodec / replay-targets'
 * prefixedCodec, without loading the Kafka client into every hook process (the distributed
 * publisher uses prefixedCodec itself).
 */
function embeddedCodec(config: EngramConfig, topic: TopicName): TopicCodec<Typed> {
  const spec = topicSpec(topic)!;
  const name = config.topicPrefix + topic;
  return {
    topic: name,
    subject: `${name}-value`,
    schema: loadAvroSchema(spec.avroFile) as object,
    toAvro: (event) => toAvroValue(event),
    fromAvro: (value) => fromAvroValue<TopicName>(topic, value),
    key: (event) => eventKey(event),
    validate: (event) => envelopeProblems(event),
  };
}

/** Publishes in order, one call per run of events of the same topic (as `engram replay`). */
function publishInRuns(
  codecOf: (topic: TopicName) => TopicCodec<Typed>,
  publish: (codec: TopicCodec<Typed>, events: Typed[]) => Promise<void>,
): PublishEvents {
  return async (events) => {
    const runs: { topic: TopicName; events: Typed[] }[] = [];
    for (const event of events) {
      const topic = topicOfRecord(event.type).topic as TopicName;
      const last = runs[runs.length - 1];
      if (last?.topic === topic) last.events.push(event);
      else runs.push({ topic, events: [event] });
    }
    for (const run of runs) await publish(codecOf(run.topic), run.events);
  };
}

const AGENT_TOPICS: readonly TopicName[] = [
  TOPICS.prompts.topic,
  TOPICS.toolCalls.topic,
  TOPICS.lifecycle.topic,
];

/**
 * The embedded log in `dataDir`. SQLite calls are synchronous, so the write-lock wait is bounded
 * by the budget (a busy `engram start` cannot hold the hook past it), then SQLITE_BUSY → spool.
 */
export async function embeddedHookPublisher(
  config: EngramConfig,
  dataDir: string,
  busyTimeoutMs: number,
): Promise<HookPublisher> {
  // The two modules, not the @engram/embedded barrel: the barrel loads @nestjs/common (the
  // exactly-once processor's Logger), ~240 ms of a 300 ms budget on this 2-core machine.
  const [{ SqliteEventLog }, { SqliteEventLogAdapter }] = await Promise.all([
    import('../../../../libs/embedded/src/sqlite-event-log'),
    import('../../../../libs/embedded/src/sqlite-event-log.adapter'),
  ]);
  const log = SqliteEventLog.open({ dataDir, busyTimeoutMs });
  try {
    const port = new SqliteEventLogAdapter(log);
    for (const topic of AGENT_TOPICS) {
      await port.ensureTopic({
        topic: config.topicPrefix + topic,
        partitions: config.segmenter.partitions,
        compacted: false,
      });
    }
    const codecs = new Map<TopicName, TopicCodec<Typed>>();
    const codecOf = (topic: TopicName) => {
      let codec = codecs.get(topic);
      if (!codec) codecs.set(topic, (codec = embeddedCodec(config, topic)));
      return codec;
    };
    return {
      publish: publishInRuns(codecOf, (codec, events) => port.publish(codec, events)),
      close: () => Promise.resolve(log.close()),
    };
  } catch (error) {
    log.close();
    throw error;
  }
}

/**
 * The configured Kafka. Connects a producer only (no topic or schema administration: the
 * services' start-up does that; a missing topic fails the publish and the events are spooled).
 */
export async function distributedHookPublisher(config: EngramConfig): Promise<HookPublisher> {
  const { AvroRegistry, createKafka, KafkaEventLog } = await import('@engram/kafka');
  const { prefixedCodec } = await import('./replay-targets');
  const kafka = createKafka({ brokers: config.kafka.brokers, clientId: 'engram-hook' });
  const port = new KafkaEventLog(kafka, new AvroRegistry(config.schemaRegistry.url));
  await port.connect();
  return {
    publish: publishInRuns(
      (topic) => prefixedCodec(config, topic),
      (codec, events) => port.publish(codec, events),
    ),
    close: () => port.disconnect(),
  };
}

// ---- memory (embedded) ----

/**
 * Memory from the embedded retrieval store in `dataDir`, through the Recall API's own services
 * on that store, in process (lexical only: the embedding model takes seconds to load, far past a
 * hook's budget). Null when the data directory has no retrieval store yet.
 *
 * - buildContext: BuildContext — the session's current thread, "You were asking about …"
 *   continuity, the latest work state, recipes and memories for the prompt, within the default
 *   token budget, each item cited. At SessionStart (no prompt yet) the query is the git branch's
 *   words, if any.
 * - injectForFile: InjectForFile — the proven, non-stale warnings about that file (seed 002's
 *   rules, including which tools inject).
 */
export async function embeddedHookMemory(dataDir: string): Promise<HookMemory | null> {
  if (!existsSync(join(dataDir, 'retrieval.db'))) return null;
  const [{ SqliteRetrievalStore }, { createEmbeddedRecallStack, LEXICAL_ONLY_EMBEDDER }] =
    await Promise.all([import('@engram/embedded'), import('@engram/app-retrieval/embedded')]);
  const store = SqliteRetrievalStore.open({ dataDir });
  const { context, access } = createEmbeddedRecallStack({
    ranking: loadConfig().ranking,
    store,
    embedder: LEXICAL_ONLY_EMBEDDER,
  });
  return hookMemoryOn({
    buildContext: (input) => context.buildContext(input),
    injectForFile: (input) => context.injectForFile(input),
    pendingReviews: (scope) => embeddedPendingReviews(dataDir, scope),
    async close() {
      await access.close().catch(() => undefined);
      store.close();
    },
  });
}

/**
 * Memory from the recall gRPC API of `engram start --distributed` (config.recall: the URL,
 * default 127.0.0.1:50051, and the optional bearer token), the same rpcs and the same printed
 * text as embedded mode. Every call carries `deadline` as its gRPC deadline; a server that is
 * down answers UNAVAILABLE at once: the hook prints no context, a line on stderr, and exits 0.
 * @grpc/grpc-js and the proto are loaded here, on the first context request, not at start-up.
 */
export async function grpcHookMemory(
  config: Pick<EngramConfig, 'recall'> & {
    /** Where the review API is (the pending-proposal count at SessionStart); absent: not asked. */
    distiller?: Pick<EngramConfig['distiller'], 'reviewGrpcUrl'>;
  },
  deadline: number,
): Promise<HookMemory> {
  const { openRecallContextClient } = await import('../hook-context-grpc');
  const client = await openRecallContextClient({
    url: config.recall.grpcUrl,
    token: config.recall.token,
    deadline,
  });
  return hookMemoryOn({
    buildContext: (input) => client.buildContext(input),
    injectForFile: (input) => client.injectForFile(input),
    ...(config.distiller && {
      pendingReviews: (scope: HookScope) =>
        grpcPendingReviews(config.distiller!.reviewGrpcUrl, config.recall.token, deadline, scope),
    }),
    close: () => Promise.resolve(client.close()),
  });
}

/** The project's pending MEMORY.md proposals from the review API (engram.review.v1). */
async function grpcPendingReviews(
  url: string,
  token: string | undefined,
  deadline: number,
  scope: HookScope,
): Promise<number> {
  const { ReviewGrpcClient } = await import('@engram/app-distiller');
  const review = new ReviewGrpcClient(url, {
    ...(token !== undefined && { token }),
    // Ends before the context's deadline: a slow review server costs the line, not the context.
    deadlineMs: Math.max(1, Math.min(REVIEW_COUNT_MAX_MS, deadline - Date.now() - 100)),
  });
  try {
    const { proposals } = await review.list({
      scope: { tenantId: scope.tenantId, projectId: scope.projectId },
      status: 'pending',
    });
    return proposals.length;
  } finally {
    review.close();
  }
}

/**
 * The project's pending MEMORY.md proposals in the embedded log (memory.proposals.v1, compacted:
 * a few records per project and day), as `engram review` lists them; 0 before any reflection.
 */
export async function embeddedPendingReviews(dataDir: string, scope: HookScope): Promise<number> {
  if (!existsSync(join(dataDir, 'events.db'))) return 0;
  const [{ SqliteEventLog, SqliteEventLogAdapter }, distiller] = await Promise.all([
    import('@engram/embedded'),
    import('@engram/app-distiller'),
  ]);
  const topics = distiller.prefixedDistillerTopics(loadConfig().topicPrefix);
  const log = SqliteEventLog.open({ dataDir });
  try {
    if (log.topic(topics.proposals) === undefined) return 0;
    const desk = new distiller.ReviewDesk(
      new SqliteEventLogAdapter(log),
      distiller.distillerCodecs(topics),
      { timeoutMs: 1_000 },
    );
    const pending = await desk.list({ ...scope, status: 'pending' });
    return pending.length;
  } finally {
    log.close();
  }
}

/** BuildContext and InjectForFile as either source answers them (their `rendered` text). */
export interface ContextAnswers {
  buildContext(input: HookScope & { query: string }): Promise<{ rendered: string }>;
  injectForFile(
    input: HookScope & { filePath: string; toolName: string },
  ): Promise<{ rendered: string }>;
  pendingReviews?: (scope: HookScope) => Promise<number>;
  close(): Promise<void>;
}

/** What the hook prints from either source: the same text whichever answers. */
export function hookMemoryOn(answers: ContextAnswers): HookMemory {
  return {
    async buildContext(scope, query) {
      const assembled = await answers.buildContext({ ...scope, query: query ?? '' });
      return titled('Engram memory for this request', assembled.rendered);
    },
    async injectForFile(scope, filePath, toolName) {
      const selection = await answers.injectForFile({
        ...scope,
        filePath,
        toolName: EDITING_TOOLS.has(toolName) ? 'Edit' : toolName,
      });
      return selection.rendered;
    },
    ...(answers.pendingReviews && { pendingReviews: answers.pendingReviews }),
    close: () => answers.close(),
  };
}

/**
 * Claude Code's other ways of changing a file: to seed 002's injection rule (Read and Edit) they
 * are edits — a warning about a file matters as much before overwriting it as before editing it.
 */
const EDITING_TOOLS: ReadonlySet<string> = new Set(['MultiEdit', 'Write', 'NotebookEdit']);

/** Assembled context under a title that says where it comes from; '' when there is none. */
export function titled(title: string, rendered: string): string {
  return rendered === ''
    ? ''
    : `${title} (recalled from past sessions; cite the id in brackets):\n${rendered}`;
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

// ---- command ----

export interface HookCliOptions {
  dataDir: string;
  distributed?: boolean;
  budgetMs?: number;
  contextBudgetMs?: number;
  flush?: boolean;
  context: boolean;
  tenant?: string;
  project?: string;
  agent?: string;
  user?: string;
}

function budgetOption(value: string): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 10 || parsed > 600_000) {
    throw new InvalidArgumentError('must be a whole number of milliseconds in 10..600000');
  }
  return parsed;
}

async function readStdin(deadline: number): Promise<string> {
  if (process.stdin.isTTY) return '';
  const chunks: Buffer[] = [];
  return new Promise((resolve) => {
    const done = () => resolve(Buffer.concat(chunks).toString('utf8'));
    const timer = setTimeout(done, Math.max(0, deadline - Date.now()));
    process.stdin.on('data', (chunk: Buffer) => chunks.push(chunk));
    process.stdin.on('end', () => {
      clearTimeout(timer);
      done();
    });
    process.stdin.on('error', () => {
      clearTimeout(timer);
      done();
    });
  });
}

/** The real stdout: everything else written there goes to stderr while the hook runs. */
let writeStdout: ((text: string, done: () => void) => void) | null = null;

/**
 * Claude Code adds a hook's plain stdout to the model's context (SessionStart,
 * UserPromptSubmit) or parses it as JSON: a library's log line there (the Nest logger kafkajs
 * logs through writes to stdout) would corrupt it. Until `finish`, stdout goes to stderr.
 */
function guardStdout(): void {
  if (writeStdout) return;
  const original = process.stdout.write.bind(process.stdout);
  writeStdout = (text, done) => original(text, done);
  process.stdout.write = (chunk: string | Uint8Array, ...rest: never[]) =>
    process.stderr.write(chunk, ...rest);
}

/** Writes, then exits 0: an abandoned publish or recall must not keep the agent waiting. */
function finish(stdout: string | null, messages: readonly string[], code = 0): void {
  for (const message of messages) process.stderr.write(`${message}\n`);
  const exit = () => process.exit(code);
  if (stdout) {
    (writeStdout ?? ((text, done) => process.stdout.write(text, done)))(`${stdout}\n`, exit);
  } else exit();
}

/**
 * The HookRun of one `engram hook` event with `options`: its spool, fallback spools, session
 * state and project under the data dir, its budgets counted from `started` (epoch ms). Events go
 * through `sources.openPublisher`, context comes from `sources.openMemory` (absent with
 * `--no-context`); `cwd` is where a payload without an absolute cwd runs (default: this
 * process's). The same for the direct path and the hook socket of `engram start`.
 */
export function hookRunFor(
  options: Omit<HookCliOptions, 'flush'>,
  input: string,
  started: number,
  sources: {
    openPublisher: HookRun['openPublisher'];
    openMemory: NonNullable<HookRun['openMemory']>;
    cwd?: string;
  },
): HookRun {
  const spool = new HookSpool(join(options.dataDir, 'spool'));
  const fallbackDirs = fallbackSpoolDirs(options.dataDir);
  const budgetMs = options.budgetMs ?? DEFAULT_HOOK_BUDGET_MS;
  const cwdOf = (cwd: string | undefined) =>
    cwd && isAbsolute(cwd) ? cwd : (sources.cwd ?? process.cwd());
  return {
    input,
    budgetMs: Math.max(0, budgetMs - (Date.now() - started)),
    contextBudgetMs: Math.max(
      0,
      (options.contextBudgetMs ?? DEFAULT_CONTEXT_BUDGET_MS) - (Date.now() - started),
    ),
    spool,
    fallbackSpools: fallbackDirs.map((dir) => new HookSpool(dir)),
    sessions: new HookSessionStore(spool.dir, { fallbackSpoolDirs: fallbackDirs }),
    project: (cwd) => resolveHookProject(cwdOf(cwd), options),
    openPublisher: sources.openPublisher,
    openMemory: options.context ? sources.openMemory : undefined,
  };
}

/** `io.stdin`: the hook's input, already read by the caller (hook-entry.ts); default: stdin. */
export function registerHookCommand(program: Command, io: { stdin?: string } = {}): void {
  program
    .command('hook')
    .description(
      'Claude Code hook bridge: read one hook event (JSON) on stdin, publish it, print memory ' +
        'context; always exits 0 (see docs/claude-code-hooks.md)',
    )
    .option('--data-dir <dir>', 'the data directory (embedded log, spool)', DEFAULT_DATA_DIR)
    .option(
      '--distributed',
      'publish to the configured Kafka and ask the recall gRPC API (ENGRAM_RECALL_GRPC_URL) for context',
    )
    .option(
      '--budget-ms <ms>',
      `hard time budget (default ${DEFAULT_HOOK_BUDGET_MS}; ${DEFAULT_FLUSH_BUDGET_MS} with --flush)`,
      budgetOption,
    )
    .option('--flush', 'publish the spooled events now (no stdin); exit 1 if some remain')
    .option(
      '--context-budget-ms <ms>',
      `time allowed for memory context (default ${DEFAULT_CONTEXT_BUDGET_MS})`,
      budgetOption,
    )
    .option('--no-context', 'do not print memory context back into the session')
    .option('--tenant <id>', `the tenantId of the events (default ${DEFAULT_HOOK_TENANT})`)
    .option('--project <id>', "the projectId (default: the git root's directory name)")
    .option('--agent <id>', `the agentId (default ${CLAUDE_CODE_AGENT_KIND})`)
    .option('--user <id>', 'the userId (default none)')
    .action(async (options: HookCliOptions) => {
      const started = Date.now();
      guardStdout();
      const spool = new HookSpool(join(options.dataDir, 'spool'));
      const fallbackDirs = fallbackSpoolDirs(options.dataDir);
      const fallbackSpools = fallbackDirs.map((dir) => new HookSpool(dir));
      try {
        const config = loadConfig();
        const budgetMs =
          options.budgetMs ?? (options.flush ? DEFAULT_FLUSH_BUDGET_MS : DEFAULT_HOOK_BUDGET_MS);
        const openPublisher = () =>
          options.distributed
            ? distributedHookPublisher(config)
            : embeddedHookPublisher(
                config,
                options.dataDir,
                Math.max(10, Math.floor(budgetMs / 2)),
              );
        if (options.flush) {
          const result = await flushSpool([...fallbackSpools, spool], openPublisher, budgetMs);
          const line = `${result.drained} spooled event(s) published, ${result.left} left`;
          finish(null, [result.error ? `${line}: ${result.error}` : line], result.left > 0 ? 1 : 0);
          return;
        }
        // Claude Code writes the payload and closes stdin at once, but 50 hooks starting together
        // on 2 cores can take longer than the publishing budget to get there: cutting the read
        // at the budget lost whole events ("hook input is not JSON"). Publishing has its budget;
        // reading gets its own, longer bound (within Claude Code's own timeout).
        const input = io.stdin ?? (await readStdin(started + Math.max(budgetMs, STDIN_WAIT_MS)));
        const outcome = await runHook(
          hookRunFor({ ...options, budgetMs }, input, started, {
            openPublisher,
            openMemory: options.distributed
              ? (deadline) => grpcHookMemory(config, deadline)
              : () => embeddedHookMemory(options.dataDir),
          }),
        );
        finish(outcome.stdout, outcome.messages);
      } catch (error) {
        // Fail open: a bad configuration must not break the agent either.
        finish(null, [`engram hook: ${errorMessage(error)}`]);
      }
    });
}
