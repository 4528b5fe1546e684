import type { FileManifest, Typed } from '@engram/contracts';
import { idOf } from '../ids/deterministic-id';
import {
  normaliseProjectPath,
  PROJECT_ROOT_PATH,
  ProjectPathError,
} from '../observation/project-paths';
import { hookEnvelope, type ClaudeCodeHookPayload, type HookProject } from './claude-code-hooks';

/**
 * The project's files at SessionStart → FileManifest (issue #20): the observer marks
 * stale the memories whose files are all gone from it, and drops the gone files from the others.
 * Pure: `engram hook` runs `git ls-files` with FILE_MANIFEST_GIT_ARGS in the project root (the
 * git top level) on a SessionStarted, reads it with `parseFileManifest` and publishes
 * `hookFileManifest`.
 */

/** `git ls-files`, NUL-terminated (names with newlines, tabs or quotes arrive verbatim). */
const LS_FILES: readonly string[] = ['--no-pager', 'ls-files', '-z', '--full-name'];

/**
 * `git ls-files` arguments: every tracked file (the index) and every untracked file git does not
 * ignore, relative to the top level. The untracked ones count: an agent's new file, not committed
 * yet, exists, and a memory about it must not go stale at the next session's start.
 */
export const FILE_MANIFEST_GIT_ARGS: readonly string[] = Object.freeze([
  ...LS_FILES,
  '--cached',
  '--others',
  '--exclude-standard',
]);

/**
 * Reads `git ls-files -z` output (linear): paths as the memories store them (normaliseProjectPath:
 * git prints them relative to the top level, the hook's project root), duplicates (a conflicted
 * file's stages) once; a path that cannot be placed is left out.
 */
export function parseFileManifest(output: string): string[] {
  const files = new Set<string>();
  for (const raw of output.split('\0')) {
    if (raw === '') continue;
    try {
      const path = normaliseProjectPath(raw, null);
      if (path !== PROJECT_ROOT_PATH) files.add(path);
    } catch (error) {
      if (!(error instanceof ProjectPathError)) throw error;
    }
  }
  return [...files];
}

/**
 * The most path characters one FileManifest carries: it is one record on agent.lifecycle.v1, and
 * Kafka's default record limit is 1 MB (about 25k paths). A partial list would stale memories
 * whose files exist, so a larger project publishes no manifest (commits still stale files).
 */
export const MAX_FILE_MANIFEST_CHARS = 900_000;

/**
 * Why a FileManifest is published: a session's start, or a client's working-tree check that found
 * a memory whose every related file is gone (seed 002 §7 layer 1 telling layer 3: the service then
 * stales it for everyone, not only for the client that saw it).
 */
export type FileManifestTrigger = 'session-start' | 'files-gone';

/**
 * The fewest milliseconds between two files-gone manifests of one project root: a hook runs on
 * every tool call, and one manifest stales every memory it does not list at once.
 */
export const FILES_GONE_MANIFEST_INTERVAL_MS = 10 * 60 * 1000;

/**
 * `git ls-files` arguments for the tracked files deleted from the working tree but not from the
 * index (a plain `rm`): the files-gone manifest leaves them out, or it would list the very files
 * whose absence it reports.
 */
export const DELETED_FILES_GIT_ARGS: readonly string[] = Object.freeze([...LS_FILES, '--deleted']);

/** The tracked files still in the working tree (both lists as `parseFileManifest` reads them). */
export function filesInWorkingTree(
  tracked: readonly string[],
  deleted: readonly string[],
): string[] {
  if (deleted.length === 0) return [...tracked];
  const gone = new Set(deleted);
  return tracked.filter((file) => !gone.has(file));
}

/**
 * Whether a files-gone manifest is due for a project root whose last one was published at
 * `lastAt` (null: never). A `lastAt` in the future (the clock was set back) does not hold the
 * next one back for longer than the interval.
 */
export function filesGoneManifestDue(
  lastAt: number | null,
  now: number,
  intervalMs: number = FILES_GONE_MANIFEST_INTERVAL_MS,
): boolean {
  return lastAt === null || now - lastAt >= intervalMs || lastAt - now >= intervalMs;
}

/**
 * The FileManifest of the session's start. Its eventId is uuid v5 of (session, HEAD): a hook
 * delivered again publishes a duplicate, not a second manifest. A files-gone manifest's eventId
 * also has its time (a later check in the same session and at the same HEAD is a new manifest;
 * the same event spooled and sent again is not). Null without a HEAD (not a git repository, or no
 * commit yet): nothing to compare with. Throws (the hook reports it) when the list is longer than
 * MAX_FILE_MANIFEST_CHARS.
 */
export function hookFileManifest(
  payload: Pick<ClaudeCodeHookPayload, 'session_id'>,
  project: HookProject,
  files: string[],
  timestamp: number,
  trigger: FileManifestTrigger = 'session-start',
): Typed<'FileManifest'> | null {
  if (project.gitHeadSha === null) return null;
  let chars = 0;
  for (const file of files) chars += file.length + 2;
  if (chars > MAX_FILE_MANIFEST_CHARS) {
    throw new RangeError(
      `${files.length} tracked files (${chars} characters of paths) exceed one FileManifest ` +
        `(${MAX_FILE_MANIFEST_CHARS}); memories of deleted files are still marked stale by commits`,
    );
  }
  return {
    type: 'FileManifest',
    ...hookEnvelope(
      payload.session_id,
      project,
      trigger === 'session-start'
        ? idOf('claude-code-hook', payload.session_id, 'FileManifest', project.gitHeadSha)
        : idOf('claude-code-hook', payload.session_id, trigger, project.gitHeadSha, timestamp),
      timestamp,
    ),
    headSha: project.gitHeadSha,
    files,
  } satisfies FileManifest & { type: 'FileManifest' };
}
