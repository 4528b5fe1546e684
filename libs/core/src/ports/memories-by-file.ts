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
 * MemoriesByFile over a CompactedView of the compacted memory topic (memory.memories.v1), on any event log: each
 * call reads what was appended since the last, then scans the latest versions. Reads only
 * committed records, so a stage that publishes the next versions in its transaction sees them on
 * its next call. Holds every memory in memory: meant for the embedded log and for commits (rare),
 * not for a hot path.
 */
export function memoriesByFileOn(view: {
  refresh(): Promise<unknown>;
  values(): readonly Memory[];
}): MemoriesByFile {
  return {
    async memoriesAbout(scope, paths) {
      if (paths.length === 0) return [];
      await view.refresh();
      return view.values().filter((memory) => memoryAboutPaths(memory, scope, paths));
    },
  };
}
