import type { Memory } from '@engram/contracts';
import { MisconfigurationError } from '../errors/engram-error';
import {
  normaliseProjectPath,
  PROJECT_ROOT_PATH,
  ProjectPathError,
} from '../observation/project-paths';

/**
 * Seed 002 §7 "File Staleness Detection", layer 1: before a memory is put in front of an agent
 * unasked, the files it is about are looked up in the working tree. A memory whose every related
 * file is gone talks about code that no longer exists: it is not injected (an explicit search
 * still shows it, marked as SPEC §7's stale memories are). Only the agent-side caller knows the
 * project root (the retrieval service may run elsewhere), so the decision is here and the caller
 * answers `exists` for a root-relative path.
 *
 * Bounded so a hook stays within its budget: at most `maxStats` lookups per call, each path
 * looked up once. A memory is "gone" only on evidence: every related file was looked up and is
 * missing. A path that cannot be checked (outside the root, over the bound, `exists` failing)
 * counts as present — the check fails open, as the hook does.
 */

/** Answers whether a root-relative POSIX path exists in the working tree (the adapter's stat). */
export type WorkingTreeExists = (rootRelativePath: string) => boolean;

export interface WorkingTreeCheckOptions {
  /** The project root, absolute (the hook's cwd project root / --project). */
  root: string;
  exists: WorkingTreeExists;
  /** At most this many `exists` calls per check; default DEFAULT_MAX_STATS. */
  maxStats?: number;
}

export interface WorkingTreeVerdict {
  /** Ids of the memories whose every related file is missing from the working tree. */
  gone: Set<string>;
  /** How many `exists` calls were made. */
  stats: number;
  /** Related files that were not looked up: outside the root, or past the bound. */
  unchecked: string[];
}

/** A hook injects a handful of memories; their files fit well within this. */
export const DEFAULT_MAX_STATS = 32;

/**
 * The path relative to `root` as memories store it, or null when it is not inside the root: an
 * absolute path elsewhere, a relative one whose `..` climbs out, `~` paths, the root itself.
 * String work only (normaliseProjectPath); the adapter also refuses symlinks out of the root.
 */
export function rootRelativePath(root: string, file: string): string | null {
  try {
    const path = normaliseProjectPath(file, root);
    return path === PROJECT_ROOT_PATH ? null : path;
  } catch (error) {
    if (error instanceof ProjectPathError || error instanceof MisconfigurationError) return null;
    throw error;
  }
}

/** Which of `memories` are about files that are all gone from the working tree. */
export function checkWorkingTree(
  memories: Iterable<Pick<Memory, 'memoryId' | 'relatedFiles'>>,
  options: WorkingTreeCheckOptions,
): WorkingTreeVerdict {
  const maxStats = Math.max(0, options.maxStats ?? DEFAULT_MAX_STATS);
  const looked = new Map<string, boolean>();
  const unchecked: string[] = [];
  const gone = new Set<string>();
  const present = (file: string): boolean => {
    const path = rootRelativePath(options.root, file);
    if (path === null) return unknown(file);
    const known = looked.get(path);
    if (known !== undefined) return known;
    if (looked.size >= maxStats) return unknown(file);
    let found: boolean;
    try {
      found = options.exists(path);
    } catch {
      // The adapter could not tell (a symlink out of the root, a permission error): unknown.
      unchecked.push(file);
      found = true;
    }
    looked.set(path, found);
    return found;
  };
  const unknown = (file: string): boolean => {
    unchecked.push(file);
    return true;
  };
  for (const memory of memories) {
    const files = memory.relatedFiles ?? [];
    // `every` stops at the first present file: a memory still about one live file costs one stat.
    if (files.length > 0 && files.every((file) => !present(file))) gone.add(memory.memoryId);
  }
  return { gone, stats: looked.size, unchecked };
}
