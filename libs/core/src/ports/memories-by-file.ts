import type { Memory } from '@engram/contracts';
import { memoryAboutPaths } from '../memory/staleness';

/** A project of a tenant. */
export interface ProjectScope {
  tenantId: string;
  projectId: string;
}

/**
 * The latest versions of a project's memories that name one of the paths (relatedFiles): what
 * the observer rewrites when a commit renames or deletes files. An adapter may return more
 * (the caller checks again); it must see every version committed before the call.
 */
export interface MemoriesByFile {
  memoriesAbout(scope: ProjectScope, paths: readonly string[]): Promise<Memory[]>;
}

/**
 * The latest versions of a project's memories that name any file: what the observer sweeps
 * against a FileManifest. An adapter may return more (the caller checks again).
 */
export interface MemoriesWithFiles {
  memoriesWithFiles(scope: ProjectScope): Promise<Memory[]>;
}

/**
 * The latest versions of a project's memories among the ids (another project's are not
 * returned): what the observer's re-promotions propagate confidence to (issue #20). It must see
 * every version committed before the call.
 */
export interface MemoriesById {
  memoriesWithIds(scope: ProjectScope, memoryIds: readonly string[]): Promise<Memory[]>;
}

/**
 * The latest versions of every memory of a type, any project: what the observer's scheduled
 * pruning looks at (issue #20). It must see every version committed before the call.
 */
export interface MemoriesOfType {
  memoriesOfType(memoryType: Memory['memoryType']): Promise<Memory[]>;
}

/**
 * MemoriesByFile (with MemoriesWithFiles and MemoriesById) over a CompactedView of the compacted memory topic (memory.memories.v1), on any event log: each
 * call reads what was appended since the last, then scans the latest versions. Reads only
 * committed records, so a stage that publishes the next versions in its transaction sees them on
 * its next call. Holds every memory in memory: meant for the embedded log and for commits (rare),
 * not for a hot path.
 */
export function memoriesByFileOn(view: {
  refresh(): Promise<unknown>;
  values(): readonly Memory[];
}): MemoriesByFile & MemoriesWithFiles & MemoriesById & MemoriesOfType {
  // One refresh at a time: the observer's two stages share the view, and interleaved reads
  // could apply an older page after a newer one.
  let last: Promise<unknown> = Promise.resolve();
  const refreshed = (): Promise<unknown> => {
    const next = last.then(
      () => view.refresh(),
      () => view.refresh(),
    );
    last = next.catch(() => undefined);
    return next;
  };
  return {
    async memoriesAbout(scope, paths) {
      if (paths.length === 0) return [];
      await refreshed();
      return view.values().filter((memory) => memoryAboutPaths(memory, scope, paths));
    },
    async memoriesWithFiles(scope) {
      await refreshed();
      return view
        .values()
        .filter(
          (memory) =>
            memory.tenantId === scope.tenantId &&
            memory.projectId === scope.projectId &&
            (memory.relatedFiles ?? []).length > 0,
        );
    },
    async memoriesWithIds(scope, memoryIds) {
      if (memoryIds.length === 0) return [];
      await refreshed();
      const wanted = new Set(memoryIds);
      return view
        .values()
        .filter(
          (memory) =>
            wanted.has(memory.memoryId) &&
            memory.tenantId === scope.tenantId &&
            memory.projectId === scope.projectId,
        );
    },
    async memoriesOfType(memoryType) {
      await refreshed();
      return view.values().filter((memory) => memory.memoryType === memoryType);
    },
  };
}
