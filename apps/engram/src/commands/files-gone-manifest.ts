import { filesGoneManifestDue, type HookProject } from '@engram/core';
import type { Typed } from '@engram/contracts';
import type { HookSessionStore } from '../hook-session-store';
import { fileManifestAt } from './hook-git';
import type { HookRun } from './hook-types';

// A client's working-tree check (seed 002 §7 layer 1: the hook, `engram recall --dir`) found a
// memory whose every related file is gone. It hides the memory from its own agent; this tells the
// service, with a fresh FileManifest of the project root, so the observer's sweep (layer 3) marks
// the memory stale for everyone instead of waiting for the next session's start.

/**
 * The files-gone FileManifest of `project`'s root (the tracked files still in the working tree,
 * at `now`), or nothing: outside a git work tree or before its first commit; when the root had
 * one within FILES_GONE_MANIFEST_INTERVAL_MS (the turn is kept beside the hook's session state,
 * so separate hook processes share it; a turn is used even when git then fails, so a broken git
 * is not asked on every tool call); or, with a message, when git fails, is slow or lists too much
 * (hook-git.ts's bounds).
 */
export async function filesGoneManifest(options: {
  sessions: HookSessionStore;
  sessionId: string;
  project: HookProject;
  now: number;
  git?: HookRun['git'];
}): Promise<{ event: Typed | null; message: string | null }> {
  const { project, now } = options;
  if (project.gitHeadSha === null || project.projectRoot === null) {
    return { event: null, message: null };
  }
  const turn = options.sessions.claimTurn(`files-gone-manifest:${project.projectRoot}`, now, (at) =>
    filesGoneManifestDue(at, now),
  );
  if (!turn) return { event: null, message: null };
  return fileManifestAt(
    { git: options.git },
    { session_id: options.sessionId },
    project,
    now,
    'files-gone',
  );
}
