import { loadConfig } from '@engram/config';
import { ClaudeTranscriptReader, mapTranscriptSession, type TranscriptCounts } from '@engram/core';
import type { Command } from 'commander';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { HookSessionStore } from '../hook-session-store';
import { ImportLedger } from '../import-ledger';
import { progressBar } from '../progress';
import {
  CODEX_FOLLOW_STATE_FILE,
  followCodexCommand,
  formatCodexImport,
  runCodexImport,
} from './codex-import';
import type { HookIdentity } from './hook.command';
import {
  publishImported,
  readLogFiles,
  transcriptFiles,
  transcriptProject,
  type ImportProgress,
  type ImportPublishing,
} from './import-sessions';
import {
  cliProgress,
  DEFAULT_DATA_DIR,
  formatDeadLettered,
  replayExitCode,
  type ReplaySummary,
} from './replay.command';
import { distributedTarget, embeddedTarget } from './replay-targets';

export { transcriptFiles, transcriptProject, type ImportProgress } from './import-sessions';

// `engram import --claude-transcripts DIR` (issue #7, docs/claude-code-hooks.md "Backfill"):
// Claude Code's session transcripts → the events the hook would have published for them, through
// the hook's own mapping (same events, redaction and deterministic ids), published like `engram
// replay` (bad lines reported with file:line and dead-lettered; `--wait` for the services).

export interface ImportRun extends ImportPublishing {
  /** A transcript file or a directory of them (e.g. ~/.claude/projects). */
  path: string;
  identity: HookIdentity;
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
  const reader = readLogFiles(new ClaudeTranscriptReader(), files, run.progress);
  const sessions = reader.sessions();
  const fromHook = sessions.filter((session) => run.recordedByHook?.(session.sessionId));
  const perSession = sessions
    .filter((session) => !fromHook.includes(session))
    .map((session) => mapTranscriptSession(session, transcriptProject(session, run.identity)));
  const summary = await publishImported(run, perSession, reader.errors);
  return {
    ...summary,
    ...reader.counts(),
    files: files.length,
    sessions: sessions.length,
    hookSessions: fromHook.length,
  };
}

interface ImportCliOptions extends HookIdentity {
  claudeTranscripts?: string;
  codexSessions?: string;
  follow?: boolean;
  idleEnd?: number;
  dataDir: string;
  distributed?: boolean;
  wait?: boolean;
  timeout?: number;
  json?: boolean;
}

/** The import's bars; none with `--json` (stderr stays for errors). */
const importProgressFor =
  (json: boolean): ImportProgress =>
  (phase) =>
    phase === 'reading'
      ? progressBar('reading', { unit: 'files', enabled: !json })
      : json
        ? progressBar(phase, { unit: 'events', enabled: false })
        : cliProgress(phase);

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
        'hooks would have published; Codex CLI rollouts → the same events (--follow: as they grow)',
    )
    .option(
      '--claude-transcripts <path>',
      'a transcript file or a directory of them (e.g. ~/.claude/projects)',
    )
    .option(
      '--codex-sessions <path>',
      'a Codex CLI rollout file or a directory of them (e.g. ~/.codex/sessions)',
    )
    .option(
      '--follow',
      'with --codex-sessions: keep publishing what the rollouts gain (Ctrl-C stops)',
    )
    .option(
      '--idle-end <seconds>',
      'with --follow: a session ends once its rollout has not changed this long (default 900)',
      parseFloat,
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
      const problem = importOptionsProblem(options);
      if (problem !== null) {
        console.error(problem);
        process.exitCode = 2;
        return;
      }
      const config = loadConfig();
      const target = options.distributed
        ? await distributedTarget(config)
        : await embeddedTarget(config, options.dataDir);
      const ledger = ImportLedger.open(options.dataDir);
      const hookSessions = new HookSessionStore(join(options.dataDir, 'spool'));
      const publishing = { ledger, config, target, identity: options, errors: process.stderr };
      const wait = options.wait && { wait: { timeoutMs: (options.timeout ?? 300) * 1000 } };
      try {
        let summary: ReplaySummary;
        if (options.codexSessions !== undefined && options.follow) {
          process.exitCode = await followCodexCommand(
            {
              ...publishing,
              path: options.codexSessions,
              statePath: join(options.dataDir, CODEX_FOLLOW_STATE_FILE),
              idleEndMs: (options.idleEnd ?? 900) * 1000,
            },
            options.json === true,
          );
          return;
        } else if (options.codexSessions !== undefined) {
          const codex = await runCodexImport({
            ...publishing,
            path: options.codexSessions,
            progress: importProgressFor(options.json === true),
            ...wait,
          });
          console.log(options.json ? JSON.stringify(codex) : formatCodexImport(codex));
          summary = codex;
        } else {
          const claude = await runImport({
            ...publishing,
            recordedByHook: (sessionId) => existsSync(hookSessions.pathOf(sessionId)),
            path: options.claudeTranscripts ?? '',
            progress: importProgressFor(options.json === true),
            ...wait,
          });
          console.log(options.json ? JSON.stringify(claude) : formatImport(claude));
          summary = claude;
        }
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

/** Why the options cannot run (exit code 2), or null. */
function importOptionsProblem(options: ImportCliOptions): string | null {
  const given = [
    ['--claude-transcripts', options.claudeTranscripts],
    ['--codex-sessions', options.codexSessions],
  ].filter((option): option is [string, string] => option[1] !== undefined);
  if (given.length !== 1) return 'give one of --claude-transcripts and --codex-sessions';
  const [[flag, path]] = given;
  if (options.follow && flag !== '--codex-sessions') return '--follow goes with --codex-sessions';
  if (options.follow && options.wait) return '--follow does not go with --wait';
  if (!existsSync(path)) return `${path} does not exist (${flag})`;
  return null;
}
