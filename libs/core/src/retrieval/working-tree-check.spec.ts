import { describe, expect, it } from 'vitest';
import { checkWorkingTree, DEFAULT_MAX_STATS, rootRelativePath } from './working-tree-check';

const ROOT = '/home/me/repo';

/** An `exists` over a fixed set of root-relative paths that records every call. */
function tree(present: readonly string[]) {
  const calls: string[] = [];
  const files = new Set(present);
  return {
    calls,
    exists: (path: string) => {
      calls.push(path);
      return files.has(path);
    },
  };
}

describe('rootRelativePath', () => {
  it('keeps relative paths inside the root, normalised', () => {
    expect(rootRelativePath(ROOT, 'src/a.ts')).toBe('src/a.ts');
    expect(rootRelativePath(ROOT, './src//lib/../a.ts')).toBe('src/a.ts');
    expect(rootRelativePath(ROOT, 'src\\win\\b.ts')).toBe('src/win/b.ts');
  });

  it('makes an absolute path under the root relative', () => {
    expect(rootRelativePath(ROOT, '/home/me/repo/src/a.ts')).toBe('src/a.ts');
  });

  it('refuses paths outside the root', () => {
    expect(rootRelativePath(ROOT, '../other/secret.ts')).toBeNull();
    expect(rootRelativePath(ROOT, 'src/../../etc/passwd')).toBeNull();
    expect(rootRelativePath(ROOT, '/etc/passwd')).toBeNull();
    expect(rootRelativePath(ROOT, '/home/me/repository/a.ts')).toBeNull();
    expect(rootRelativePath(ROOT, '~/notes.md')).toBeNull();
    expect(rootRelativePath(ROOT, '')).toBeNull();
    expect(rootRelativePath(ROOT, '.')).toBeNull();
    expect(rootRelativePath('relative/root', 'src/a.ts')).toBe('src/a.ts');
    expect(rootRelativePath('relative/root', '/abs/a.ts')).toBeNull();
  });
});

describe('checkWorkingTree', () => {
  it('finds gone a memory whose every related file is missing, and only that one', () => {
    const fs = tree(['src/live.ts']);
    const verdict = checkWorkingTree(
      [
        { memoryId: 'all-gone', relatedFiles: ['src/deleted.ts', 'src/also-deleted.ts'] },
        { memoryId: 'one-left', relatedFiles: ['src/deleted.ts', 'src/live.ts'] },
        { memoryId: 'live', relatedFiles: ['src/live.ts'] },
        { memoryId: 'no-files', relatedFiles: [] },
      ],
      { root: ROOT, exists: fs.exists },
    );
    expect([...verdict.gone]).toEqual(['all-gone']);
    expect(verdict.unchecked).toEqual([]);
  });

  it('stats each path once per call (cached across memories and spellings)', () => {
    const fs = tree([]);
    const verdict = checkWorkingTree(
      [
        { memoryId: 'a', relatedFiles: ['src/x.ts'] },
        { memoryId: 'b', relatedFiles: ['./src/x.ts', '/home/me/repo/src/x.ts'] },
      ],
      { root: ROOT, exists: fs.exists },
    );
    expect(fs.calls).toEqual(['src/x.ts']);
    expect(verdict.stats).toBe(1);
    expect([...verdict.gone].sort()).toEqual(['a', 'b']);
  });

  it('never asks about a path outside the root, and does not call its memory gone', () => {
    const fs = tree([]);
    const verdict = checkWorkingTree(
      [
        { memoryId: 'outside', relatedFiles: ['../elsewhere/x.ts', '/etc/hosts'] },
        { memoryId: 'mixed', relatedFiles: ['src/gone.ts', '/etc/hosts'] },
      ],
      { root: ROOT, exists: fs.exists },
    );
    expect(fs.calls).toEqual(['src/gone.ts']);
    expect(verdict.gone.size).toBe(0);
    // `outside` stops at its first (unknown, so present) file; `mixed` reaches /etc/hosts.
    expect(verdict.unchecked).toEqual(['../elsewhere/x.ts', '/etc/hosts']);
  });

  it('makes at most maxStats lookups; what is left unchecked counts as present', () => {
    const fs = tree([]);
    const memories = Array.from({ length: 10 }, (_, i) => ({
      memoryId: `m${i}`,
      relatedFiles: [`src/f${i}.ts`],
    }));
    const verdict = checkWorkingTree(memories, { root: ROOT, exists: fs.exists, maxStats: 3 });
    expect(fs.calls).toHaveLength(3);
    expect([...verdict.gone]).toEqual(['m0', 'm1', 'm2']);
    expect(verdict.unchecked).toEqual(memories.slice(3).map((m) => m.relatedFiles[0]));
  });

  it('bounds by default too', () => {
    const fs = tree([]);
    const memories = Array.from({ length: DEFAULT_MAX_STATS + 5 }, (_, i) => ({
      memoryId: `m${i}`,
      relatedFiles: [`f${i}.ts`],
    }));
    checkWorkingTree(memories, { root: ROOT, exists: fs.exists });
    expect(fs.calls).toHaveLength(DEFAULT_MAX_STATS);
  });

  it('stops at the first present file of a memory', () => {
    const fs = tree(['src/a.ts']);
    checkWorkingTree([{ memoryId: 'm', relatedFiles: ['src/a.ts', 'src/b.ts'] }], {
      root: ROOT,
      exists: fs.exists,
    });
    expect(fs.calls).toEqual(['src/a.ts']);
  });

  it('fails open when the lookup throws (a symlink out of the root, a permission error)', () => {
    const verdict = checkWorkingTree([{ memoryId: 'm', relatedFiles: ['link/out.ts'] }], {
      root: ROOT,
      exists: () => {
        throw new Error('leads out of the project root');
      },
    });
    expect(verdict.gone.size).toBe(0);
    expect(verdict.unchecked).toEqual(['link/out.ts']);
  });
});
