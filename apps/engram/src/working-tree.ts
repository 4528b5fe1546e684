import type { WorkingTreeCheckOptions, WorkingTreeExists } from '@engram/core';
import { lstatSync, realpathSync } from 'node:fs';
import { basename, dirname, join, sep } from 'node:path';

/**
 * The stat behind the retrieval-time file check (libs/core working-tree-check.ts): whether a
 * root-relative path exists under `root`. The core has already refused paths that climb out of
 * the root; here symlinks are not followed out of it either — a path whose directory resolves
 * outside the root throws (the core counts it as unknown, i.e. present), and the file itself is
 * lstat'ed, so a link is "there" without its target being touched.
 */
export function workingTreeExists(root: string): WorkingTreeExists {
  let realRoot: string | null = null;
  return (rootRelativePath) => {
    realRoot ??= realpathSync(root);
    const path = join(realRoot, rootRelativePath);
    let directory: string;
    try {
      directory = realpathSync(dirname(path));
    } catch (error) {
      if (isMissing(error)) return false;
      throw error;
    }
    if (directory !== realRoot && !directory.startsWith(`${realRoot}${sep}`)) {
      throw new Error(`${rootRelativePath} leads out of the project root ${root}`);
    }
    try {
      lstatSync(join(directory, basename(path)));
      return true;
    } catch (error) {
      if (isMissing(error)) return false;
      throw error;
    }
  };
}

/** The check's options for a caller that may not know its project root (null: no check). */
export function workingTreeCheck(root: string | undefined): WorkingTreeCheckOptions | null {
  return root ? { root, exists: workingTreeExists(root) } : null;
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}
