import { jaccard } from '../../segmentation/intent-keywords';
import { filePathsIn } from '../files-in-text';
import { truncateChars } from '../tokens';
import { oneLine, type ToolEntry } from '../transcript';
import type { DistilledFact } from '../types';

/**
 * Errors and how they were resolved, from the commands of a segment (seed 001: "DISCOVERS a
 * debugging root cause (what broke, why, the actual fix)"; issue 6: "commands that worked after
 * failing"). Walking the calls in order:
 * - a failed command opens a failure (reruns of the same command count as attempts);
 * - successful edits while failures are open are the candidate fix;
 * - the same command succeeding closes it: 🔴 "failed …; fixed by editing …", or 🟡 "passed on a
 *   rerun without changes — possibly flaky" when nothing was edited;
 * - a different but similar command succeeding closes it as 🔴 "X worked where Y failed";
 * - failures still open at the end are 🟡 "still failing".
 * Only calls with a command are considered: a failed Edit of a missing string is an agent's
 * routine retry, not a lesson. Other commands that succeed while a failure is open (an install,
 * a migration) are part of its fix, like edits. What is not a failure: a call the user refused
 * (their next prompt says why), and a server or watcher that ran until the agent's timeout.
 * Shell bookkeeping (cd, ls, rm, mv, mkdir, kill …) fails routinely on a wrong path: its facts
 * are 🟢 only. A command is compared without its output plumbing (`2>&1 | head -50`, a trailing
 * `&`, a leading `cd dir &&`), so `npm start 2>&1 | head` reruns `npm start`.
 */
interface OpenFailure {
  command: string;
  toolName: string;
  first: ToolEntry;
  attempts: number;
  eventIds: string[];
  editedFiles: string[];
  editEventIds: string[];
  /** Other commands that succeeded while this failure was open. */
  commandsRun: string[];
}

const MAX_ERROR_CHARS = 160;
const MAX_COMMAND_CHARS = 120;
const SIMILAR_COMMANDS = 0.5;

export function errorFacts(tools: readonly ToolEntry[]): DistilledFact[] {
  const facts: DistilledFact[] = [];
  const open: OpenFailure[] = [];
  for (const entry of tools) {
    if (entry.command === null) {
      if (entry.outcome === 'ok' && entry.activity === 'execute') noteEdit(open, entry);
      continue;
    }
    if (entry.outcome === 'error' && refused(entry)) continue;
    const command = coreCommand(entry.command);
    const failed = entry.outcome === 'error' && !ranUntilTimeout(entry);
    const same = open.findIndex((f) => f.toolName === entry.toolName && f.command === command);
    if (failed) {
      if (same >= 0) {
        open[same].attempts += 1;
        open[same].eventIds.push(entry.eventId);
      } else {
        open.push({
          command,
          toolName: entry.toolName,
          first: entry,
          attempts: 1,
          eventIds: [entry.eventId],
          editedFiles: [],
          editEventIds: [],
          commandsRun: [],
        });
      }
      continue;
    }
    if (same >= 0) {
      const failure = open[same];
      // The same command from another directory: where it runs was the fix, not a rerun.
      const elsewhere = directoryOf(entry.command) !== directoryOf(failure.first.command);
      facts.push(
        elsewhere && fixPart(failure) === null
          ? alternativeFact(failure, entry, oneLine(entry.command), '🟡')
          : resolvedFact(failure, entry),
      );
      open.splice(same, 1);
      continue;
    }
    const similar = lastIndexWhere(open, (f) => similarCommands(f.command, command));
    if (similar >= 0) {
      facts.push(alternativeFact(open[similar], entry, command));
      open.splice(similar, 1);
      continue;
    }
    if (!isBookkeeping(command)) noteCommand(open, entry, command);
  }
  for (const failure of open) facts.push(unresolvedFact(failure));
  return facts;
}

function noteEdit(open: OpenFailure[], entry: ToolEntry): void {
  for (const failure of open) {
    for (const path of entry.filePaths) {
      if (!failure.editedFiles.includes(path)) failure.editedFiles.push(path);
    }
    if (entry.filePaths.length > 0) failure.editEventIds.push(entry.eventId);
  }
}

function noteCommand(open: OpenFailure[], entry: ToolEntry, command: string): void {
  for (const failure of open) {
    if (!failure.commandsRun.includes(command)) failure.commandsRun.push(command);
    failure.editEventIds.push(entry.eventId);
  }
}

function resolvedFact(failure: OpenFailure, success: ToolEntry): DistilledFact {
  const failed = `${quoteCommand(failure.command)} failed${errorPart(failure.first)}${attemptsPart(failure)}`;
  const fix = fixPart(failure);
  return {
    priority: routinePriority(failure, fix === null ? '🟡' : '🔴'),
    time: success.time,
    at: success.timestamp,
    text:
      fix === null
        ? `${failed}; passed on a rerun without changes — possibly flaky`
        : `${failed}; fixed by ${fix}, after which it passed`,
    kind: 'error-resolution',
    sourceEventIds: [...failure.eventIds, ...failure.editEventIds, success.eventId],
    relatedFiles: relatedFiles(failure, success),
  };
}

/** "editing a.ts, b.ts", else "running `npx playwright install`", or null when nothing changed. */
function fixPart(failure: OpenFailure): string | null {
  // Edits are the fix when there are any (the commands between were mostly diagnostics).
  if (failure.editedFiles.length > 0) return `editing ${listFiles(failure.editedFiles)}`;
  if (failure.commandsRun.length > 0) {
    return `running ${failure.commandsRun.slice(0, 2).map(quoteCommand).join(' and ')}`;
  }
  return null;
}

function alternativeFact(
  failure: OpenFailure,
  success: ToolEntry,
  command: string,
  priority: DistilledFact['priority'] = '🔴',
): DistilledFact {
  const fix = fixPart(failure);
  const edits = fix === null ? '' : ` (after ${fix})`;
  const failed = oneLine(failure.first.command ?? failure.command);
  return {
    priority: routinePriority(failure, priority),
    time: success.time,
    at: success.timestamp,
    text: `${quoteCommand(command)} worked where ${quoteCommand(failed)} failed${errorPart(failure.first)}${edits}`,
    kind: 'command-fix',
    sourceEventIds: [...failure.eventIds, ...failure.editEventIds, success.eventId],
    relatedFiles: relatedFiles(failure, success),
  };
}

function unresolvedFact(failure: OpenFailure): DistilledFact {
  const last = failure.first;
  return {
    priority: routinePriority(failure, '🟡'),
    time: last.time,
    at: last.timestamp,
    text: `${quoteCommand(failure.command)} still failing${errorPart(last)}${attemptsPart(failure)}`,
    kind: 'error-unresolved',
    sourceEventIds: [...failure.eventIds],
    relatedFiles: relatedFiles(failure, null),
  };
}

function relatedFiles(failure: OpenFailure, success: ToolEntry | null): string[] {
  const fromError = filePathsIn(failure.first.errorMessage ?? '').filter((path) =>
    path.includes('/'),
  );
  return [
    ...new Set([
      ...failure.editedFiles,
      ...failure.first.filePaths,
      ...(success?.filePaths ?? []),
      ...fromError,
    ]),
  ];
}

function errorPart(entry: ToolEntry): string {
  const line = errorLine(entry.errorMessage);
  return line === '' ? '' : ` with "${truncateChars(oneLine(line), MAX_ERROR_CHARS)}"`;
}

/** Lines of output that say what went wrong, not a banner, a warning or a stack frame. */
const ERROR_LINE =
  /\b(?:[a-z]*error|errors|cannot|can't|could not|couldn't|failed|failure|not found|no such|denied|refused|expected|exception|fatal|invalid|undefined|missing|does not exist|doesn't exist|timed out|unable)\b/i;
/** Error codes: `ERR_MODULE_NOT_FOUND`, `ENOENT`, `EADDRINUSE` (case matters: not "every"). */
const ERROR_CODE = /\b(?:ERR_[A-Z_]+|E[A-Z]{3,})\b/;
const NOT_ERROR_LINE =
  /^\s*(?:\(node:\d+\)|>|at\s|throw\b|\^|\(Use `node|npm (?:ERR!|error) (?:A complete log|code|path|errno|command)|\s*$)|ExperimentalWarning|DeprecationWarning/;

/** The line of an error message that says what failed (else its first non-empty line). */
export function errorLine(message: string | null): string {
  const lines = linesOf(message);
  return lines.find(isErrorLine) ?? lines[0] ?? '';
}

function isErrorLine(line: string): boolean {
  return (ERROR_LINE.test(line) || ERROR_CODE.test(line)) && !NOT_ERROR_LINE.test(line);
}

/** The non-empty lines of a message, trimmed, without terminal colour codes. */
function linesOf(message: string | null): string[] {
  return (
    (message ?? '')
      // Colour codes, with their escape character or left without it by a log.
      // eslint-disable-next-line no-control-regex
      .replace(/\u001b?\[\d{1,3}(?:;\d{1,3})*m/g, '')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '')
  );
}

/**
 * The command never ran: the user refused the call (Claude Code's message; their next prompt
 * says why), or its `cd` step found no such directory or was not allowed.
 */
function refused(entry: ToolEntry): boolean {
  const message = entry.errorMessage ?? '';
  if (
    /\bcd\b[^\n]*(?:no such file or directory|not a directory)|^cd to .* was blocked/i.test(message)
  ) {
    return true;
  }
  return /\b(?:doesn't|does not) want to proceed\b|\btool use was rejected\b|\brejected by the user\b/i.test(
    message,
  );
}

/**
 * A server, watcher or background job that the agent's harness stopped at its timeout ("Command
 * timed out after 2m …") without printing any error: it ran, it did not fail. A test's own
 * timeout ("Timeout of 5000ms exceeded") is a failure.
 */
function ranUntilTimeout(entry: ToolEntry): boolean {
  const lines = linesOf(entry.errorMessage);
  if (lines.length === 0 || !/^command timed out\b/i.test(lines[0])) return false;
  return !lines.slice(1).some(isErrorLine);
}

/** Shell bookkeeping: moving around and looking at files, killing processes. */
const BOOKKEEPING = new Set(
  'cd pushd popd ls ll pwd cat head tail less echo printf touch rm rmdir mv cp ln mkdir chmod chown kill pkill killall lsof ps which whereis type find grep rg wc sleep true false open clear stat file du df tree'.split(
    ' ',
  ),
);

/** True when every step of the command is bookkeeping (`cd x && rm y`, `pkill -f node`). */
export function isBookkeeping(command: string): boolean {
  const steps = command
    .split(/&&|\|\||;|\|/)
    .map((step) => step.trim().split(/\s+/)[0] ?? '')
    .filter((word) => word !== '' && !/^[A-Z_][A-Z0-9_]*=/.test(word));
  return steps.length > 0 && steps.every((word) => BOOKKEEPING.has(word.replace(/^.*\//, '')));
}

/** Bookkeeping failures are routine (🟢, not stored); others keep their priority. */
function routinePriority(
  failure: OpenFailure,
  priority: DistilledFact['priority'],
): DistilledFact['priority'] {
  return isBookkeeping(failure.command) ? '🟢' : priority;
}

/** The directory a command's leading `cd dir &&` moves to ('' when none). */
function directoryOf(command: string | null): string {
  return /^\s*cd\s+(\S+)\s*&&/.exec(command ?? '')?.[1] ?? '';
}

/**
 * The command without its output plumbing: `2>&1`, a final `| head/tail/grep/less …`, a final
 * `&`, and leading `cd dir &&` steps (where it runs, which a wrong guess of the agent's changes).
 */
export function coreCommand(command: string): string {
  let text = oneLine(command);
  for (let i = 0; i < 4; i += 1) {
    const next = text
      .replace(/\s*&\s*$/, '')
      .replace(/\s*\|\s*(?:head|tail|grep|less|more|cat|tee)\b[^|]*$/, '')
      .replace(/\s+2>&1\b/g, '')
      .replace(/^cd\s+\S+\s*&&\s*/, '')
      .trim();
    if (next === text) break;
    text = next;
  }
  return text === '' ? oneLine(command) : text;
}

function attemptsPart(failure: OpenFailure): string {
  return failure.attempts > 1 ? ` (${failure.attempts} failed runs)` : '';
}

function quoteCommand(command: string): string {
  return `\`${truncateChars(command, MAX_COMMAND_CHARS)}\``;
}

export function listFiles(paths: readonly string[], max = 5): string {
  const shown = paths.slice(0, max).join(', ');
  return paths.length > max ? `${shown} and ${paths.length - max} more` : shown;
}

/** What a command is for, so `npm test` and `npx vitest run` count as the same attempt. */
const PURPOSES: ReadonlyMap<string, string> = new Map([
  ...['vitest', 'jest', 'mocha', 'pytest', 'ava'].map((tool) => [tool, 'test'] as const),
  ...['tsc', 'webpack', 'rollup', 'esbuild', 'swc', 'make'].map((tool) => [tool, 'build'] as const),
  ...['eslint', 'biome', 'ruff', 'flake8'].map((tool) => [tool, 'lint'] as const),
  ['prettier', 'format'],
]);
const PURPOSE_WORDS = new Set([
  'test',
  'build',
  'lint',
  'format',
  'install',
  'migrate',
  'typecheck',
  'deploy',
]);

/** Runners and shells: they say how a command runs, not what it is for. */
const GENERIC_WORDS = new Set(
  'npm npx pnpm yarn bun bunx run exec node python python3 uv poetry sudo sh bash zsh env time'.split(
    ' ',
  ),
);

/** The words of a command that say what it does (`cd` steps, flags, env and runners dropped). */
export function commandWords(command: string): Set<string> {
  const words = new Set<string>();
  for (const step of command.toLowerCase().split(/&&|\|\||[;|]/)) {
    const tokens = step.trim().split(/\s+/);
    if (tokens[0] === 'cd' || tokens[0] === 'pushd') continue;
    for (const token of tokens) {
      if (token === '' || token.startsWith('-') || /^[a-z_][a-z0-9_]*=/.test(token)) continue;
      for (const part of token.split(/[/:.()]/)) {
        if (part.length < 2 || GENERIC_WORDS.has(part)) continue;
        words.add(part);
        const purpose = PURPOSES.get(part);
        if (purpose !== undefined) words.add(purpose);
      }
    }
  }
  return words;
}

/** Two different commands for the same job: a shared purpose word, or half their words. */
export function similarCommands(a: string, b: string): boolean {
  const wordsA = commandWords(a);
  const wordsB = commandWords(b);
  for (const word of wordsA) if (PURPOSE_WORDS.has(word) && wordsB.has(word)) return true;
  return jaccard(wordsA, wordsB) >= SIMILAR_COMMANDS;
}

function lastIndexWhere<T>(items: readonly T[], predicate: (item: T) => boolean): number {
  for (let i = items.length - 1; i >= 0; i -= 1) if (predicate(items[i])) return i;
  return -1;
}
