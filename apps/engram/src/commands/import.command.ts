import { loadConfig, type EngramConfig } from '@engram/config';
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
  ClaudeTranscriptReader,
  mapTranscriptSession,
  type HookProject,
  type TranscriptCounts,
  type TranscriptSession,
} from '@engram/core';
import type { Command } from 'commander';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { HookSessionStore } from '../hook-spool';
import { ImportLedger } from '../import-ledger';
import { progressBar, type Progress } from '../progress';
import { DEFAULT_HOOK_TENANT, resolveHookProject, type HookIdentity } from './hook.command';
import {
  cliProgress,
  DEFAULT_DATA_DIR,
  formatDeadLettered,
  publishReplay,
  replayExitCode,
  serviceGroups,
  type ReplaySummary,
} from './replay.command';
import { distributedTarget, embeddedTarget, type ReplayTarget } from './replay-targets';

// `engram import --claude-transcripts DIR` (issue #7, docs/claude-code-hooks.md "Backfill"):
// Claude Code's session transcripts → the events the hook would have published for them, through
// the hook's own mapping (same events, redaction and deterministic ids), published like `engram
// replay` (bad lines reported with file:line and dead-lettered; `--wait` for the services).

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

export interface ImportRun {
  config: EngramConfig;
  /** A transcript file or a directory of them (e.g. ~/.claude/projects). */
  path: string;
  target: ReplayTarget;
  identity: HookIdentity;
  errors: NodeJS.WritableStream;
  wait?: { timeoutMs: number };
  /** Bars for reading, publishing and processing; none by default. */
  progress?: ImportProgress;
  /** What earlier imports published: those events are not published again. */
  ledger: ImportLedger;
  /** Sessions `engram hook` recorded live (their events are in the log already): skipped. */
  recordedByHook?: (sessionId: string) => boolean;
}

export interface ImportSummary extends ReplaySummary, TranscriptCounts {
  files: number;
  sessions: number;
  /** Events an earlier import published already (not published again). */
  alreadyImported: number;
  /** Sessions skipped because the hook recorded them. */
  hookSessions: number;
}

/** Reads, maps and publishes every transcript under `run.path`. */
export async function runImport(run: ImportRun): Promise<ImportSummary> {
  const files = transcriptFiles(run.path);
  const reader = readTranscripts(files, run.progress);
  const sessions = reader.sessions();
  const { events, alreadyImported, hookSessions } = eventsToPublish(sessions, run);
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
    reader.errors,
  );
  run.ledger.record(events.map(({ event }) => event));
  return {
    ...summary,
    ...reader.counts(),
    files: files.length,
    sessions: sessions.length,
    alreadyImported,
    hookSessions,
  };
}

function readTranscripts(files: readonly string[], progress?: ImportProgress) {
  const reader = new ClaudeTranscriptReader();
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
 * The sessions' events less what was published before (the ledger; sessions the hook recorded),
 * in an order that publishes in few batches.
 */
function eventsToPublish(sessions: readonly TranscriptSession[], run: ImportRun) {
  const fromHook = sessions.filter((session) => run.recordedByHook?.(session.sessionId));
  const perSession = sessions
    .filter((session) => !fromHook.includes(session))
    .map((session) => mapTranscriptSession(session, transcriptProject(session, run.identity)));
  const known = run.ledger.known(perSession.flat().map((event) => event.eventId));
  const fresh = perSession.map((events) => events.filter((event) => !known.has(event.eventId)));
  const topicOf = (event: Typed) => topicOfRecord(event.type).topic as TopicName;
  const events: ReplayEvent[] = batchAcrossSessions(fresh, topicOf).map((event, i) => ({
    line: i + 1,
    topic: topicOf(event),
    key: eventKey(event),
    event,
  }));
  return { events, alreadyImported: known.size, hookSessions: fromHook.length };
}

/**
 * Whose events a session's are: the hook's resolution of its `cwd` (git root, its name, the
 * tenant) with the branch the transcript recorded — HEAD today says nothing about that day.
 */
export function transcriptProject(session: TranscriptSession, identity: HookIdentity): HookProject {
  const recorded = { gitBranch: session.gitBranch, gitHeadSha: null };
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

interface ImportCliOptions extends HookIdentity {
  claudeTranscripts: string;
  dataDir: string;
  distributed?: boolean;
  wait?: boolean;
  timeout?: number;
  json?: boolean;
}

const importProgress: ImportProgress = (phase) =>
  phase === 'reading' ? progressBar('reading', { unit: 'files' }) : cliProgress(phase);

export function formatImport(summary: ImportSummary): string {
  return (
    `${summary.files} transcript file(s), ${summary.sessions} session(s): ` +
    `${summary.published} event(s) published, ${summary.alreadyImported} imported before, ` +
    `${summary.hookSessions} session(s) skipped (recorded by engram hook), ` +
    `${summary.rejected} line(s) rejected to the ` +
    `dead-letter topic, ${summary.duplicates} repeated line(s) skipped, ${summary.unpaired} ` +
    'tool call(s) without a result' +
    (summary.caughtUp === true ? '; every event processed' : '')
  );
}

export function registerImportCommand(program: Command): void {
  program
    .command('import')
    .description(
      'backfill Engram from recorded sessions: Claude Code JSONL transcripts → the events its ' +
        'hooks would have published',
    )
    .requiredOption(
      '--claude-transcripts <path>',
      'a transcript file or a directory of them (e.g. ~/.claude/projects)',
    )
    .option('--project <id>', "the projectId (default: the git root's directory name of each cwd)")
    .option('--tenant <id>', 'the tenantId (default "default", as `engram hook`)')
    .option('--user <id>', 'the userId (default none)')
    .option('--data-dir <dir>', 'embedded mode: the data directory', DEFAULT_DATA_DIR)
    .option('--distributed', 'publish to the configured Kafka instead of the embedded log')
    .option('--wait', 'return only when the running services have processed every event')
    .option('--timeout <seconds>', 'give up waiting after this long (default 300)', parseFloat)
    .option('--json', 'print the summary as one JSON object')
    .action(async (options: ImportCliOptions) => {
      try {
        statSync(options.claudeTranscripts);
      } catch {
        console.error(`${options.claudeTranscripts} does not exist (--claude-transcripts)`);
        process.exitCode = 2;
        return;
      }
      const config = loadConfig();
      const target = options.distributed
        ? await distributedTarget(config)
        : await embeddedTarget(config, options.dataDir);
      const ledger = ImportLedger.open(options.dataDir);
      const hookSessions = new HookSessionStore(join(options.dataDir, 'spool'));
      try {
        const summary = await runImport({
          ledger,
          recordedByHook: (sessionId) => existsSync(hookSessions.pathOf(sessionId)),
          config,
          path: options.claudeTranscripts,
          target,
          identity: options,
          errors: process.stderr,
          progress: importProgress,
          ...(options.wait && {
            wait: { timeoutMs: (options.timeout ?? 300) * 1000 },
          }),
        });
        console.log(options.json ? JSON.stringify(summary) : formatImport(summary));
        if (summary.caughtUp === false) {
          console.error(
            'timed out waiting for the services to process the events: is `engram start` running?',
          );
        }
        if (summary.deadLettered?.length) console.error(formatDeadLettered(summary.deadLettered));
        // As engram replay's: 4 timed out, 3 rejected lines, 5 dead-lettered by the services.
        process.exitCode = replayExitCode(summary);
      } finally {
        ledger.close();
        await target.close();
      }
    });
}
