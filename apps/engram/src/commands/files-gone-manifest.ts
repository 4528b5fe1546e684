import { errorMessage, filesGoneManifestDue, idOf, type HookProject } from '@engram/core';
import type { Typed } from '@engram/contracts';
import { join } from 'node:path';
import { HookSessionStore } from '../hook-session-store';
import { fileManifestAt, resolveHookProject } from './hook-git';
import type { HookPublisher, HookRun } from './hook-types';

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

/**
 * Whether a recall's working-tree check marked stale a memory result the service did not (same
 * results, in the same order, before and after the check): the service then needs telling.
 */
export function markedStaleByWorkingTree(
  before: readonly { text: string }[],
  after: readonly { text: string; memory?: { stale: boolean } | null }[],
): boolean {
  return after.some(
    (result, i) => result.memory?.stale === false && result.text !== before[i]?.text,
  );
}

/** The agentId of `engram recall`'s files-gone manifests. */
export const RECALL_AGENT = 'engram-recall';

/**
 * `engram recall --dir`'s files-gone manifest: of the git work tree around `dir`, for the
 * recall's tenant and project, under the hook's turn for that root (the same data directory's
 * session state), published where the recall's mode publishes (the SQLite log, or Kafka). Its
 * session is one per tenant, project and root, so the observer files the sweep under that
 * project. A line for stderr, or null when nothing was due; it never throws: the recall has
 * answered already.
 */
export async function recallFilesGoneManifest(options: {
  dir: string;
  dataDir: string;
  tenantId: string;
  projectId: string;
  openPublisher: () => Promise<HookPublisher>;
  now?: number;
}): Promise<string | null> {
  const { tenantId, projectId } = options;
  const project = resolveHookProject(options.dir, {
    tenant: tenantId,
    project: projectId,
    agent: RECALL_AGENT,
  });
  const manifest = await filesGoneManifest({
    sessions: new HookSessionStore(join(options.dataDir, 'spool')),
    sessionId: idOf(RECALL_AGENT, tenantId, projectId, project.projectRoot ?? ''),
    project,
    now: options.now ?? Date.now(),
  });
  if (manifest.event === null) return manifest.message;
  let publisher: HookPublisher | null = null;
  try {
    publisher = await options.openPublisher();
    await publisher.publish([manifest.event]);
    return (
      `engram recall: memories about files gone from ${project.projectRoot} are marked; ` +
      'a FileManifest went to the service, which marks them stale for everyone'
    );
  } catch (error) {
    return `engram recall: no FileManifest published (${errorMessage(error)})`;
  } finally {
    await publisher?.close().catch(() => undefined);
  }
}
