import type { CommitMade, FileManifest, Memory, RenamedFile } from '@engram/contracts';
import { idOf } from '../ids/deterministic-id';
import { normaliseProjectPath, PROJECT_ROOT_PATH } from '../observation/project-paths';
import { anySameFile, sameFile } from '../retrieval/file-paths';

/**
 * Staleness from the code itself (SPEC §6 lifecycle, seed 002 §7 "File Staleness Detection",
 * layer 2): a commit that renames a file moves the memories about it to the new path; a commit
 * that deletes a memory's only files marks it stale. Pure: the observer looks the memories up
 * and publishes what this returns, as the memories' next versions under the same ids.
 */

/** What a commit did to the project's files, as the memories store paths. */
export interface CommitFileChanges {
  /** The CommitMade's eventId: the next versions' eventIds derive from it (replay-safe). */
  eventId: string;
  tenantId: string;
  projectId: string;
  sha: string;
  /** The commit's event time: a deletion's `staleAt`, the next versions' timestamp. */
  at: number;
  renamed: RenamedFile[];
  deleted: string[];
}

/** Tags a rewritten memory keeps as its history: the path it was moved from, or lost. */
export const RENAMED_FROM_TAG = 'renamed-from:';
export const FILE_DELETED_TAG = 'file-deleted:';

/**
 * The renames and deletions of a commit, paths normalised like the observer's (repository-
 * relative); paths outside the project are dropped. Null when the commit renamed and deleted
 * nothing the memories could name.
 */
export function commitFileChanges(
  commit: Pick<
    CommitMade,
    'eventId' | 'tenantId' | 'projectId' | 'sha' | 'timestamp' | 'renamedFiles' | 'deletedFiles'
  >,
  projectRoot: string | null,
): CommitFileChanges | null {
  const renamed: RenamedFile[] = [];
  for (const { from, to } of commit.renamedFiles ?? []) {
    const placedFrom = placed(from, projectRoot);
    const placedTo = placed(to, projectRoot);
    if (placedFrom === null || placedTo === null || placedFrom === placedTo) continue;
    if (renamed.some((r) => r.from === placedFrom)) continue;
    renamed.push({ from: placedFrom, to: placedTo });
  }
  const deleted = [
    ...new Set(
      (commit.deletedFiles ?? []).flatMap((path) => {
        const p = placed(path, projectRoot);
        return p === null ? [] : [p];
      }),
    ),
  ];
  if (renamed.length === 0 && deleted.length === 0) return null;
  return {
    eventId: commit.eventId,
    tenantId: commit.tenantId,
    projectId: commit.projectId,
    sha: commit.sha,
    at: commit.timestamp,
    renamed,
    deleted,
  };
}

/** The paths whose memories a commit may change (the store is asked for these). */
export function pathsChangedBy(changes: CommitFileChanges): string[] {
  return [...new Set([...changes.renamed.map((r) => r.from), ...changes.deleted])];
}

/** Whether the memory is of the commit's project and names one of `paths`. */
export function memoryAboutPaths(
  memory: Pick<Memory, 'tenantId' | 'projectId' | 'relatedFiles'>,
  scope: { tenantId: string; projectId: string },
  paths: readonly string[],
): boolean {
  return (
    memory.tenantId === scope.tenantId &&
    memory.projectId === scope.projectId &&
    anySameFile(memory.relatedFiles ?? [], paths)
  );
}

/**
 * A memory's next version after the commit, or null when the commit changes nothing about it.
 *
 * - A related file renamed: the path is rewritten (order kept, duplicates dropped) and the old
 *   path kept as a `renamed-from:` tag. Staleness is left as it was.
 * - Some related files deleted, others left: the deleted ones are dropped from relatedFiles
 *   (a `file-deleted:` tag each) and the memory stays live for the files that remain.
 * - Every related file deleted (after this commit's renames): `staleAt` = the commit's time
 *   (kept if already set), relatedFiles kept, so an explicit search still finds it by path and
 *   shows it with the stale prefix; it is never injected again.
 *
 * The next version keeps the memory's id, takes a new eventId derived from the memory's
 * previous version and the commit (so a replay derives the same one), the commit's time as its
 * timestamp, and the commit's eventId in its provenance.
 */
export function reviseForFileChanges(memory: Memory, changes: CommitFileChanges): Memory | null {
  if (memory.tenantId !== changes.tenantId || memory.projectId !== changes.projectId) return null;
  const before = memory.relatedFiles ?? [];
  if (before.length === 0) return null;
  const renamedFrom: string[] = [];
  const deleted: string[] = [];
  const kept: string[] = [];
  for (const file of before) {
    const rename = changes.renamed.find((r) => sameFile(file, r.from));
    if (rename) {
      renamedFrom.push(file);
      kept.push(rename.to);
    } else if (changes.deleted.some((path) => sameFile(file, path))) {
      deleted.push(file);
    } else {
      kept.push(file);
    }
  }
  if (renamedFrom.length === 0 && deleted.length === 0) return null;
  const relatedFiles = [...new Set(kept)];
  const allGone = relatedFiles.length === 0;
  if (allGone && memory.staleAt !== null && memory.staleAt !== undefined) return null;
  const historyTags = [
    ...renamedFrom.map((path) => RENAMED_FROM_TAG + path),
    ...(allGone ? [] : deleted.map((path) => FILE_DELETED_TAG + path)),
  ];
  return {
    ...memory,
    eventId: idOf('file-changes', memory.memoryId, memory.eventId, changes.eventId),
    timestamp: changes.at,
    relatedFiles: allGone ? before : relatedFiles,
    tags: [...new Set([...(memory.tags ?? []), ...historyTags])],
    staleAt: allGone ? changes.at : (memory.staleAt ?? null),
    sourceEventIds: [...new Set([...(memory.sourceEventIds ?? []), changes.eventId])],
  };
}

/**
 * The next versions of the memories a commit changes, in input order. `memories` are the
 * candidates (their latest versions); the ones of other projects or not about the changed paths
 * are left alone.
 */
export function reviseMemoriesForCommit(
  memories: readonly Memory[],
  changes: CommitFileChanges,
): Memory[] {
  const revised: Memory[] = [];
  for (const memory of memories) {
    const next = reviseForFileChanges(memory, changes);
    if (next) revised.push(next);
  }
  return revised;
}

/**
 * The sweep against a FileManifest (seed 002 §7, layer 3): a file a memory names that the
 * project's tracked files at HEAD do not list is treated as deleted, by the same revision as a
 * commit's deletions (`reviseMemoriesForCommit`): a memory whose related files are all absent
 * gets `staleAt` = the manifest's time, one that keeps other files loses the absent ones
 * (`file-deleted:` tags). `memories` are the project's memories with related files (their latest
 * versions); others are ignored. Returns the changes as a commit's (eventId and time the
 * manifest's, sha its headSha, no renames), or null when no memory names an absent file.
 *
 * Linear in the manifest plus the memories' files (one Set). A path of a memory that cannot be
 * placed in the project (an absolute path with the root unknown) is never taken for absent, and
 * an empty manifest (nothing tracked, or a listing that failed) sweeps nothing.
 */
export function manifestFileChanges(
  manifest: Pick<
    FileManifest,
    'eventId' | 'tenantId' | 'projectId' | 'headSha' | 'timestamp' | 'files'
  >,
  memories: readonly Memory[],
  projectRoot: string | null,
): CommitFileChanges | null {
  if (manifest.files.length === 0) return null;
  const present = new Set<string>();
  for (const file of manifest.files) {
    const p = placed(file, projectRoot);
    if (p !== null) present.add(p);
  }
  if (present.size === 0) return null;
  const deleted = new Set<string>();
  for (const memory of memories) {
    if (memory.tenantId !== manifest.tenantId || memory.projectId !== manifest.projectId) continue;
    for (const file of memory.relatedFiles ?? []) {
      const p = placed(file, projectRoot);
      if (p !== null && !present.has(p)) deleted.add(file);
    }
  }
  if (deleted.size === 0) return null;
  return {
    eventId: manifest.eventId,
    tenantId: manifest.tenantId,
    projectId: manifest.projectId,
    sha: manifest.headSha ?? '',
    at: manifest.timestamp,
    renamed: [],
    deleted: [...deleted],
  };
}

function placed(path: string, projectRoot: string | null): string | null {
  try {
    const p = normaliseProjectPath(path, projectRoot);
    return p === PROJECT_ROOT_PATH ? null : p;
  } catch {
    return null;
  }
}
