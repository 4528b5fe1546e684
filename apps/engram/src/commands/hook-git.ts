import {
  CLAUDE_CODE_AGENT_KIND,
  DELETED_FILES_GIT_ARGS,
  errorMessage,
  FILE_MANIFEST_GIT_ARGS,
  filesInWorkingTree,
  hookCommitMade,
  hookFileManifest,
  LAST_COMMIT_GIT_ARGS,
  parseFileManifest,
  parseLastCommit,
  type ClaudeCodeHookPayload,
  type FileManifestTrigger,
  type GitCommitInvocation,
  type HookProject,
} from '@engram/core';
import type { Typed } from '@engram/contracts';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import type { HookRun } from './hook-types';

// The project of a hook's cwd (read from `.git` directly, no `git` process within the budget),
// and the two git calls a hook makes: `git log` after a commit, `git ls-files` at a session's
// start.

/** `engram bootstrap`'s default tenant (DEFAULT_BOOTSTRAP_TENANT), so both meet without flags. */
export const DEFAULT_HOOK_TENANT = 'default';
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

/**
 * The CommitMade of the commit a Bash call made: HEAD's commit from `git log` in the payload's
 * cwd (or the command's `git -C` directory when it is in the same project), with the tool call's
 * event time. Nothing, and a message for stderr, when git fails, is slow, or HEAD's commit is
 * older than the call; the hook goes on with its other events either way.
 */
export async function commitMadeBy(
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
 *
 * `files-gone` (a working-tree check found a memory whose every file is gone): the same list
 * without the tracked files deleted from the working tree (`git ls-files --deleted`, run beside
 * it under the same bounds), so a file removed by a plain `rm` is absent from it too.
 */
export async function fileManifestAt(
  run: Pick<HookRun, 'git'>,
  payload: Pick<ClaudeCodeHookPayload, 'session_id'>,
  project: HookProject,
  timestamp: number,
  trigger: FileManifestTrigger = 'session-start',
): Promise<{ event: Typed | null; message: string | null }> {
  if (project.gitHeadSha === null || project.projectRoot === null) {
    return { event: null, message: null };
  }
  const root = project.projectRoot;
  const list = async (args: readonly string[]) => {
    const git = run.git ?? runGit;
    return parseFileManifest(
      await git(root, args, GIT_LS_FILES_TIMEOUT_MS, GIT_LS_FILES_MAX_BYTES),
    );
  };
  try {
    const [tracked, deleted] = await Promise.all([
      list(FILE_MANIFEST_GIT_ARGS),
      trigger === 'files-gone' ? list(DELETED_FILES_GIT_ARGS) : [],
    ]);
    const files = filesInWorkingTree(tracked, deleted);
    const event = hookFileManifest(payload, project, files, timestamp, trigger);
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
