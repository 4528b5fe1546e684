import type { CommitMade, RenamedFile, Typed } from '@engram/contracts';
import { idOf } from '../ids/deterministic-id';
import { normaliseProjectPath, ProjectPathError } from '../observation/project-paths';
import { redactSecrets } from '../redaction';
import {
  hookEnvelope,
  hookResponseFailure,
  type ClaudeCodeHookPayload,
  type HookProject,
} from './claude-code-hooks';

/**
 * A commit made in a Claude Code session → CommitMade (issue #20): the observer moves the
 * memories of renamed files and marks those of deleted files stale. Pure: `engram hook` asks
 * `hookCommitCommand` whether a successful Bash call ran a commit-creating git command, runs
 * `git log` with `LAST_COMMIT_GIT_ARGS` (only then: the hook stays fast for every other call),
 * reads it with `parseLastCommit` and publishes `hookCommitMade`.
 *
 * Commit-creating: `git commit`, `git merge`, `git cherry-pick`, `git revert`, `git am` (not
 * their --abort / --quit / --no-commit / --squash / --dry-run forms). `git pull` and
 * `git rebase` are left out: they bring or rewrite several commits, and the last one alone
 * would say only part of what changed.
 */

/** Bash commands are scanned up to this many characters (a commit comes first in practice). */
export const MAX_SCANNED_COMMAND_CHARS = 20_000;
/** Longest commit message kept in a CommitMade. */
export const MAX_COMMIT_MESSAGE_CHARS = 2_000;
/**
 * The last commit is published only when it was committed this recently: a command that
 * succeeded without committing (`git commit …; git status`, nothing to commit) must not
 * publish an old HEAD as this session's commit.
 */
export const MAX_COMMIT_AGE_MS = 15 * 60 * 1000;

/** A commit-creating git command found in a shell command. */
export interface GitCommitInvocation {
  /** commit, merge, cherry-pick, revert or am. */
  subcommand: string;
  /** The `git -C <dir>` directory, as written (relative to the cwd), or null. */
  directory: string | null;
}

/** Per subcommand, the flags with which it creates no commit. */
const COMMIT_CREATING: ReadonlyMap<string, ReadonlySet<string>> = new Map([
  ['commit', new Set(['--dry-run', '--help', '-h'])],
  ['merge', new Set(['--abort', '--quit', '--no-commit', '--squash', '--help', '-h'])],
  ['cherry-pick', new Set(['--abort', '--quit', '--no-commit', '-n', '--help', '-h'])],
  ['revert', new Set(['--abort', '--quit', '--no-commit', '-n', '--help', '-h'])],
  ['am', new Set(['--abort', '--quit', '--show-current-patch', '--help', '-h'])],
]);

/** git's global options that take the next word as their value. */
const GIT_OPTIONS_WITH_VALUE = new Set([
  '-C',
  '-c',
  '--git-dir',
  '--work-tree',
  '--namespace',
  '--exec-path',
  '--config-env',
]);

/** Words that run the command after them (`env`, `time`, …): skipped before `git`. */
const COMMAND_PREFIXES = new Set(['env', 'command', 'exec', 'time', 'nohup', 'builtin']);

/**
 * The commit-creating git command of a shell command, or null. One pass over the text (linear,
 * capped at MAX_SCANNED_COMMAND_CHARS): words are split as a shell would (quotes, backslashes),
 * commands at `;`, `&`, `|`, newlines and parentheses outside quotes. The first commit-creating
 * invocation wins. A `git -C dir` or `--git-dir` / `--work-tree` elsewhere is the caller's to
 * check (the directory is returned; `--git-dir` / `--work-tree` make it unusable → null).
 */
export function gitCommitInvocation(command: string): GitCommitInvocation | null {
  for (const words of shellCommands(command.slice(0, MAX_SCANNED_COMMAND_CHARS))) {
    const found = invocationOf(words);
    if (found !== null) return found;
  }
  return null;
}

function invocationOf(words: readonly string[]): GitCommitInvocation | null {
  let i = 0;
  while (
    i < words.length &&
    (/^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i]) || COMMAND_PREFIXES.has(words[i]))
  ) {
    i += 1;
  }
  const program = words[i];
  if (program !== 'git' && !program?.endsWith('/git')) return null;
  i += 1;
  let directory: string | null = null;
  for (; i < words.length && words[i].startsWith('-'); i += 1) {
    const option = words[i];
    if (/^--(git-dir|work-tree)(=|$)/.test(option)) return null;
    if (GIT_OPTIONS_WITH_VALUE.has(option)) {
      i += 1;
      if (option === '-C' && words[i] !== undefined) {
        // Successive -C options are relative to each other (git's rule).
        directory =
          directory === null || words[i].startsWith('/') ? words[i] : `${directory}/${words[i]}`;
      }
    }
  }
  const subcommand = words[i];
  const excluded = subcommand === undefined ? undefined : COMMIT_CREATING.get(subcommand);
  if (excluded === undefined) return null;
  for (const word of words.slice(i + 1)) if (excluded.has(word)) return null;
  return { subcommand, directory };
}

/** The shell command's simple commands as word lists (no expansion; quotes removed). */
function shellCommands(text: string): string[][] {
  const commands: string[][] = [];
  let words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: "'" | '"' | null = null;
  const endWord = () => {
    if (inWord) words.push(word);
    word = '';
    inWord = false;
  };
  const endCommand = () => {
    endWord();
    if (words.length > 0) commands.push(words);
    words = [];
  };
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (quote === "'") {
      if (c === "'") quote = null;
      else word += c;
    } else if (quote === '"') {
      if (c === '"') quote = null;
      else if (c === '\\' && i + 1 < text.length && '"\\$`'.includes(text[i + 1])) {
        word += text[i + 1];
        i += 1;
      } else word += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
    } else if (c === '\\') {
      if (i + 1 < text.length && text[i + 1] !== '\n') {
        word += text[i + 1];
        inWord = true;
      }
      i += 1;
    } else if (c === ' ' || c === '\t') {
      endWord();
    } else if (';&|\n()`'.includes(c)) {
      endCommand();
    } else {
      word += c;
      inWord = true;
    }
  }
  endCommand();
  return commands;
}

/**
 * The commit-creating git command a successful Bash call ran (PostToolUse, not
 * PostToolUseFailure, and no failure in its response), or null.
 */
export function hookCommitCommand(payload: ClaudeCodeHookPayload): GitCommitInvocation | null {
  if (payload.hook_event_name !== 'PostToolUse' || payload.tool_name !== 'Bash') return null;
  const input = payload.tool_input;
  if (typeof input !== 'object' || input === null) return null;
  const command = (input as { command?: unknown }).command;
  if (typeof command !== 'string') return null;
  if (hookResponseFailure(payload.tool_response) !== null) return null;
  return gitCommitInvocation(command);
}

// Field separator no SHA, number or commit message holds; -z makes git NUL-terminate the header
// and every path, so names with newlines, tabs or quotes arrive verbatim.
const FIELD = '\x1f';

/**
 * `git log` arguments for HEAD's commit with its files: renames detected (-M), a merge against
 * its first parent (what it brought into the branch), no pager, colour or signature lines.
 */
export const LAST_COMMIT_GIT_ARGS: readonly string[] = Object.freeze([
  '--no-pager',
  'log',
  '-1',
  '-z',
  '--no-color',
  '--no-show-signature',
  '--name-status',
  '-M',
  '-m',
  '--first-parent',
  `--format=%H${FIELD}%ct${FIELD}%B`,
  '--',
]);

/** HEAD's commit as `git log LAST_COMMIT_GIT_ARGS` prints it, paths repository-relative. */
export interface LastCommit {
  sha: string;
  /** Committer time, epoch ms. */
  committedAt: number;
  message: string;
  /** Added, modified, copied or type-changed. */
  changedFiles: string[];
  renamedFiles: RenamedFile[];
  deletedFiles: string[];
}

/**
 * Reads `git log` output of LAST_COMMIT_GIT_ARGS (linear). Paths as the memories store them
 * (normaliseProjectPath: git prints them relative to the top level, the hook's project root);
 * a path that cannot be placed is left out. Throws on output that is not such a commit.
 */
export function parseLastCommit(output: string): LastCommit {
  const headerEnd = output.indexOf('\0');
  const header = headerEnd === -1 ? output : output.slice(0, headerEnd);
  const first = header.indexOf(FIELD);
  const second = first === -1 ? -1 : header.indexOf(FIELD, first + 1);
  const sha = header.slice(0, Math.max(first, 0)).trim();
  const seconds = first === -1 ? '' : header.slice(first + 1, second === -1 ? undefined : second);
  if (!/^[0-9a-f]{40,64}$/.test(sha) || !/^\d+$/.test(seconds)) {
    throw new Error(`unexpected git log output: ${JSON.stringify(header.slice(0, 80))}`);
  }
  const commit: LastCommit = {
    sha,
    committedAt: Number(seconds) * 1000,
    message: second === -1 ? '' : header.slice(second + 1).trim(),
    changedFiles: [],
    renamedFiles: [],
    deletedFiles: [],
  };
  if (headerEnd === -1) return commit;
  const fields = output
    .slice(headerEnd + 1)
    .replace(/^\n/, '')
    .split('\0');
  for (let i = 0; i < fields.length;) {
    const status = fields[i];
    i += 1;
    if (status === '') continue;
    if (status.startsWith('R') || status.startsWith('C')) {
      const from = placed(fields[i]);
      const to = placed(fields[i + 1]);
      i += 2;
      if (to === null) continue;
      if (status.startsWith('R') && from !== null) commit.renamedFiles.push({ from, to });
      else addOnce(commit.changedFiles, to);
    } else {
      const path = placed(fields[i]);
      i += 1;
      if (path === null) continue;
      addOnce(status.startsWith('D') ? commit.deletedFiles : commit.changedFiles, path);
    }
  }
  return commit;
}

function addOnce(paths: string[], path: string): void {
  if (!paths.includes(path)) paths.push(path);
}

function placed(raw: string | undefined): string | null {
  if (raw === undefined) return null;
  try {
    return normaliseProjectPath(raw, null);
  } catch (error) {
    if (error instanceof ProjectPathError) return null;
    throw error;
  }
}

/**
 * The CommitMade of a commit the session made, or null when it is too old to be the command's
 * (MAX_COMMIT_AGE_MS before `timestamp`). Its eventId is uuid v5 of (session, sha): a hook
 * delivered again, or a later command that leaves the same HEAD, publishes a duplicate, not a
 * second commit. The message is redacted and capped; the branch is the one HEAD is on now.
 */
export function hookCommitMade(
  payload: Pick<ClaudeCodeHookPayload, 'session_id'>,
  project: HookProject,
  commit: LastCommit,
  timestamp: number,
): Typed<'CommitMade'> | null {
  if (commit.committedAt < timestamp - MAX_COMMIT_AGE_MS) return null;
  const message = commit.message.slice(0, MAX_COMMIT_MESSAGE_CHARS);
  return {
    type: 'CommitMade',
    ...hookEnvelope(
      payload.session_id,
      project,
      idOf('claude-code-hook', payload.session_id, 'CommitMade', commit.sha),
      timestamp,
    ),
    sha: commit.sha,
    changedFiles: commit.changedFiles,
    renamedFiles: commit.renamedFiles,
    deletedFiles: commit.deletedFiles,
    message: message === '' ? null : redactSecrets(message).text,
    branch: project.gitBranch,
  } satisfies CommitMade & { type: 'CommitMade' };
}
