import type { EngramConfig } from '@engram/config';
import {
  eventKey,
  topicOfRecord,
  type ReplayEvent,
  type TopicName,
  type Typed,
} from '@engram/contracts';
import {
  batchAcrossSessions,
  CLAUDE_CODE_AGENT_KIND,
  type HookProject,
  type TranscriptLineError,
  type TranscriptSession,
} from '@engram/core';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { ImportLedger } from '../import-ledger';
import type { Progress } from '../progress';
import { DEFAULT_HOOK_TENANT, resolveHookProject, type HookIdentity } from './hook.command';
import { publishReplay, serviceGroups, type ReplaySummary } from './replay.command';
import type { ReplayTarget } from './replay-targets';

// What `engram import` does for every kind of session log (Claude Code transcripts, Codex
// rollouts): find the files, read them, say whose sessions they are, and publish their events
// less what an earlier import published (the ledger).

/** Side directories of a session that hold no session of their own (or a sub-agent's copy). */
const SKIPPED_DIRECTORIES = new Set(['subagents', 'tool-results']);

/** The transcript files under `path` (or `path` itself), sorted: the same order every run. */
export function transcriptFiles(path: string): string[] {
  const stat = statSync(path);
  if (stat.isFile()) return [path];
  const files: string[] = [];
  const walk = (directory: string) => {
    for (const entry of readdirSync(directory, { withFileTypes: true })) {
      const full = join(directory, entry.name);
      if (entry.isDirectory() && !SKIPPED_DIRECTORIES.has(entry.name)) walk(full);
      else if (entry.isFile() && entry.name.endsWith('.jsonl')) files.push(full);
    }
  };
  walk(path);
  return files.sort();
}

/** Opens the bar of a phase: reading the files, then replay's publishing and processing. */
export type ImportProgress = (phase: 'reading' | 'publishing' | 'processing') => Progress;

/** Where and how an import publishes. */
export interface ImportPublishing {
  config: EngramConfig;
  target: ReplayTarget;
  errors: NodeJS.WritableStream;
  wait?: { timeoutMs: number };
  /** Bars for reading, publishing and processing; none by default. */
  progress?: ImportProgress;
  /** What earlier imports published: those events are not published again. */
  ledger: ImportLedger;
}

/** Reads the files into `reader`, in order, with a bar per file. */
export function readLogFiles<R extends { read(content: string, file: string): void }>(
  reader: R,
  files: readonly string[],
  progress?: ImportProgress,
): R {
  const bar = progress?.('reading');
  bar?.total(files.length);
  for (const file of files) {
    reader.read(readFileSync(file, 'utf8'), file);
    bar?.advance();
  }
  bar?.stop();
  return reader;
}

/**
 * Publishes sessions' events less what the ledger knows (published before) and records them:
 * bad lines reported and dead-lettered first, then the events in few batches.
 */
export async function publishImported(
  run: ImportPublishing,
  perSession: readonly Typed[][],
  rejected: readonly TranscriptLineError[],
): Promise<ReplaySummary & { alreadyImported: number }> {
  const { events, alreadyImported } = eventsToPublish(perSession, run.ledger);
  const summary = await publishReplay(
    {
      config: run.config,
      target: run.target,
      errors: run.errors,
      ...(run.progress && { progress: run.progress }),
      ...(run.wait && {
        wait: { groups: serviceGroups(run.config), timeoutMs: run.wait.timeoutMs },
      }),
    },
    events,
    rejected,
  );
  run.ledger.record(events.map(({ event }) => event));
  return { ...summary, alreadyImported };
}

/**
 * The sessions' events less what was published before (the ledger), in an order that publishes
 * in few batches.
 */
function eventsToPublish(perSession: readonly Typed[][], ledger: ImportLedger) {
  const known = ledger.known(perSession.flat().map((event) => event.eventId));
  const fresh = perSession.map((events) => events.filter((event) => !known.has(event.eventId)));
  const topicOf = (event: Typed) => topicOfRecord(event.type).topic as TopicName;
  const events: ReplayEvent[] = batchAcrossSessions(fresh, topicOf).map((event, i) => ({
    line: i + 1,
    topic: topicOf(event),
    key: eventKey(event),
    event,
  }));
  return { events, alreadyImported: known.size };
}

/**
 * Whose events a session's are: the hook's resolution of its `cwd` (git root, its name, the
 * tenant) with the branch (and commit, where the log has one) the session recorded — HEAD today
 * says nothing about that day.
 */
export function transcriptProject(
  session: TranscriptSession & { gitHeadSha?: string | null },
  identity: HookIdentity,
): HookProject {
  const recorded = { gitBranch: session.gitBranch, gitHeadSha: session.gitHeadSha ?? null };
  if (session.cwd !== null) return { ...resolveHookProject(session.cwd, identity), ...recorded };
  // No cwd on any line: no root to make paths relative to (absolute paths are left out).
  return {
    tenantId: identity.tenant?.trim() || DEFAULT_HOOK_TENANT,
    projectId: identity.project?.trim() || 'unknown',
    projectRoot: null,
    agentId: identity.agent?.trim() || CLAUDE_CODE_AGENT_KIND,
    userId: identity.user?.trim() || null,
    ...recorded,
  };
}
