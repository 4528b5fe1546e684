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
 * routine retry, not a lesson.
 */
interface OpenFailure {
  command: string;
  toolName: string;
  first: ToolEntry;
  attempts: number;
  eventIds: string[];
  editedFiles: string[];
  editEventIds: string[];
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
    const command = oneLine(entry.command);
    const same = open.findIndex((f) => f.toolName === entry.toolName && f.command === command);
    if (entry.outcome === 'error') {
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
        });
      }
      continue;
    }
    if (same >= 0) {
      facts.push(resolvedFact(open[same], entry));
      open.splice(same, 1);
      continue;
    }
    const similar = lastIndexWhere(open, (f) => similarCommands(f.command, command));
    if (similar >= 0) {
      facts.push(alternativeFact(open[similar], entry, command));
      open.splice(similar, 1);
    }
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

function resolvedFact(failure: OpenFailure, success: ToolEntry): DistilledFact {
  const failed = `${quoteCommand(failure.command)} failed${errorPart(failure.first)}${attemptsPart(failure)}`;
  const fixed = failure.editedFiles.length > 0;
  return {
    priority: fixed ? '🔴' : '🟡',
    time: success.time,
    at: success.timestamp,
    text: fixed
      ? `${failed}; fixed by editing ${listFiles(failure.editedFiles)}, after which it passed`
      : `${failed}; passed on a rerun without changes — possibly flaky`,
    kind: 'error-resolution',
    sourceEventIds: [...failure.eventIds, ...failure.editEventIds, success.eventId],
    relatedFiles: relatedFiles(failure, success),
  };
}

function alternativeFact(failure: OpenFailure, success: ToolEntry, command: string): DistilledFact {
  const edits =
    failure.editedFiles.length > 0 ? ` (after editing ${listFiles(failure.editedFiles)})` : '';
  return {
    priority: '🔴',
    time: success.time,
    at: success.timestamp,
    text: `${quoteCommand(command)} worked where ${quoteCommand(failure.command)} failed${errorPart(failure.first)}${edits}`,
    kind: 'command-fix',
    sourceEventIds: [...failure.eventIds, ...failure.editEventIds, success.eventId],
    relatedFiles: relatedFiles(failure, success),
  };
}

function unresolvedFact(failure: OpenFailure): DistilledFact {
  const last = failure.first;
  return {
    priority: '🟡',
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
  if (entry.errorMessage === null) return '';
  const firstLine = entry.errorMessage.split('\n').find((line) => line.trim() !== '') ?? '';
  return firstLine === '' ? '' : ` with "${truncateChars(oneLine(firstLine), MAX_ERROR_CHARS)}"`;
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
