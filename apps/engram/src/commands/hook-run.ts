import type { Typed } from '@engram/contracts';
import {
  errorMessage,
  hookCommitCommand,
  hookContextOutput,
  mapClaudeCodeHook,
  parseClaudeCodeHookPayload,
  NO_PENDING_REVIEWS,
  withPendingReviewLine,
  type ClaudeCodeHookPayload,
  type HookMemoryRequest,
  type HookProject,
} from '@engram/core';
import type { HookSpool } from '../hook-spool';
import { filesGoneManifest } from './files-gone-manifest';
import { commitMadeBy, fileManifestAt } from './hook-git';
import type { HookMemory, HookOutcome, HookPublisher, HookRun, HookScope } from './hook-types';

// One `engram hook` run: the payload mapped to events, delivered to the log or the spool within
// the budget, then the memory context recalled within its own.

/** Session counter files untouched this long are removed at a SessionStart. */
export const SESSION_STATE_MAX_AGE_MS = 30 * 24 * 60 * 60 * 1000;
/** Longest additionalContext printed (Claude Code adds it to the model's context). */
const MAX_CONTEXT_CHARS = 4_000;
/** Room kept after SessionStart's context for the review reminder (pendingReviewLine). */
const REVIEW_LINE_CHARS = 200;

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
  let filesGone = false;
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
      ...(project.projectRoot !== null && { projectRoot: project.projectRoot }),
      onFilesGone: () => {
        filesGone = true;
      },
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
  // The check hid memories about files that are all gone: the service hears of it too.
  if (filesGone) await publishFilesGoneManifest(run, payload, project, now(), outcome);
  return outcome;
}

/**
 * The files-gone FileManifest (files-gone-manifest.ts), delivered as the hook's events are: within
 * a publishing budget of its own that starts once git has answered, spooled when it runs out.
 */
async function publishFilesGoneManifest(
  run: HookRun,
  payload: ClaudeCodeHookPayload,
  project: HookProject,
  at: number,
  outcome: HookOutcome,
): Promise<void> {
  const manifest = await filesGoneManifest({
    sessions: run.sessions,
    sessionId: payload.session_id,
    project,
    now: at,
    ...(run.git && { git: run.git }),
  });
  if (manifest.message) outcome.messages.push(manifest.message);
  if (manifest.event) await deliver(run, [manifest.event], Date.now() + run.budgetMs, outcome);
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
    outcome.published += events.length;
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
        outcome.spooled += events.length;
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
        return NO_PENDING_REVIEWS;
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

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
