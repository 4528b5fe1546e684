import { observerSettings } from '@engram/core';
import { SqliteObserverGraph } from '@engram/embedded';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootstrapGraph, formatBootstrap, gitTopLevel, readGitLog } from './bootstrap.command';

/**
 * A throwaway repository: commits of `[files…]`, each file rewritten so git sees a change.
 * Names and dates are fixed so the history is the same on every run.
 */
function makeGitRepo(dir: string, commits: string[][]): void {
  const git = (args: string[], date = '2026-01-01T10:00:00Z') =>
    execFileSync('git', ['-C', dir, ...args], {
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 'Test',
        GIT_AUTHOR_EMAIL: 'test@example.com',
        GIT_COMMITTER_NAME: 'Test',
        GIT_COMMITTER_EMAIL: 'test@example.com',
        GIT_AUTHOR_DATE: date,
        GIT_COMMITTER_DATE: date,
        GIT_CONFIG_NOSYSTEM: '1',
        HOME: dir,
      },
    });
  mkdirSync(dir, { recursive: true });
  git(['init', '-q', '-b', 'main']);
  commits.forEach((files, i) => {
    for (const file of files) {
      mkdirSync(dirname(join(dir, file)), { recursive: true });
      writeFileSync(join(dir, file), `change ${i}\n`);
    }
    git(['add', '-A']);
    git(['commit', '-q', '-m', `commit ${i}`], `2026-01-01T10:${String(i).padStart(2, '0')}:00Z`);
  });
}

const HISTORY = [
  ['src/auth/token.ts', 'src/auth/session.ts'],
  ['src/auth/token.ts', 'src/auth/session.ts', 'test/auth.spec.ts'],
  ['src/auth/token.ts', 'src/db/pool.ts'],
  ['README.md'],
  ['src/auth/token.ts', 'package-lock.json'],
  // A bulk commit (formatting): more files than --max-files-per-commit 4 below.
  ['a.ts', 'b.ts', 'c.ts', 'd.ts', 'e.ts'],
];

describe('engram bootstrap (embedded graph, temporary git repository)', () => {
  let root: string;
  let repo: string;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'engram-bootstrap-'));
    repo = join(root, 'shop');
    makeGitRepo(repo, HISTORY);
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  const options = { maxCommits: 2000, maxFilesPerCommit: 4 };
  const open = (name: string) =>
    SqliteObserverGraph.open({ dataDir: join(root, name), rule: observerSettings() });

  it('should seed co-access from co-commits, skipping bulk commits and lock files', async () => {
    const graph = open('seed');
    try {
      const report = await bootstrapGraph(graph, { ...options, repo }, 'embedded');
      expect(report).toMatchObject({
        project: 'shop',
        tenant: 'default',
        tenantSource: 'default',
        commitsRead: 6,
        commitsUsed: 5,
        skippedTooManyFiles: 1,
        skippedNoFiles: 0,
        generatedPaths: 1,
        files: 5,
        touches: 9,
        pairs: 5,
      });
      const scope = { tenantId: 'default', projectId: 'shop' };
      const neighbours = await graph.topCoAccessNeighbours({
        ...scope,
        path: 'src/auth/token.ts',
        k: 5,
      });
      // session.ts: both in 2 commits, either in 4 (token.ts in 4, session.ts in 2).
      expect(neighbours.map((n) => [n.file, n.sessionCount, n.weight])).toEqual([
        ['src/auth/session.ts', 2, 0.5],
        ['src/db/pool.ts', 1, 0.25],
        ['test/auth.spec.ts', 1, 0.25],
      ]);
      expect(neighbours[0]).toMatchObject({ rawCount: 2, direction: 'both', avgTimeDeltaMs: 0 });
      expect(formatBootstrap(report)).toMatch(/6 commits read, 5 written as sessions, 1 skipped/);
      expect(formatBootstrap(report)).toMatch(/pass --tenant/);
    } finally {
      graph.close();
    }
  });

  it('should change nothing when run again, and find the tenant from the graph', async () => {
    const graph = open('rerun');
    try {
      await bootstrapGraph(graph, { ...options, repo, tenant: 'acme' }, 'embedded');
      const query = { tenantId: 'acme', projectId: 'shop', path: 'src/auth/token.ts', k: 5 };
      const before = await graph.topCoAccessNeighbours(query);
      const again = await bootstrapGraph(graph, { ...options, repo }, 'embedded');
      expect(again).toMatchObject({ tenant: 'acme', tenantSource: 'graph' });
      expect(await graph.topCoAccessNeighbours(query)).toEqual(before);
    } finally {
      graph.close();
    }
  });

  it('should bound the history by --max-commits and batch whole commits', async () => {
    const graph = open('bounded');
    const progress: number[] = [];
    try {
      const report = await bootstrapGraph(
        graph,
        { ...options, repo, maxCommits: 3, batchRows: 1 },
        'embedded',
        (done) => progress.push(done),
      );
      // The 3 newest: the bulk commit, token.ts + lock file, README.md.
      expect(report).toMatchObject({ commitsRead: 3, commitsUsed: 2, pairs: 0, batches: 2 });
      expect(progress.at(-1)).toBe(3);
      expect(report.project).toBe('shop');
    } finally {
      graph.close();
    }
  });

  it('should name what is wrong: not a git repository, no such directory, git missing', async () => {
    const plain = join(root, 'plain');
    mkdirSync(plain);
    await expect(gitTopLevel(plain)).rejects.toThrow(/plain is not a git repository/);
    await expect(gitTopLevel(join(root, 'missing'))).rejects.toThrow(/missing does not exist/);
    const path = process.env.PATH;
    process.env.PATH = join(root, 'no-bin');
    try {
      await expect(gitTopLevel(repo)).rejects.toThrow(/git is not installed/);
    } finally {
      process.env.PATH = path;
    }
  });

  it('should read an empty repository as no commits', async () => {
    const empty = join(root, 'empty');
    makeGitRepo(empty, []);
    expect(await readGitLog(await gitTopLevel(empty), { maxCommits: 10 })).toEqual([]);
  });
});
