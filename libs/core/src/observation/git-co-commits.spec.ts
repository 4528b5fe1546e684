import { describe, expect, it } from 'vitest';
import { emptyCoAccessAggregate, applyCoCommit, topNeighbours } from './co-access-graph';
import {
  applyGraphBatch,
  coCommitBatches,
  coCommitSessionId,
  DEFAULT_CO_COMMIT_SETTINGS,
  emptyCoCommitStats,
  gitLogArgs,
  parseGitLog,
  prepareCommit,
  type GitCommit,
} from './git-co-commits';
import { observerSettings } from './observer-settings';

const SCOPE = { tenantId: 'acme', projectId: 'shop' };
const SETTINGS = { ...DEFAULT_CO_COMMIT_SETTINGS, maxFilesPerCommit: 4 };
const SHA = (n: number) => n.toString(16).padStart(40, '0');

function commit(n: number, files: string[]): GitCommit {
  return { sha: SHA(n), committedAt: 1_700_000_000_000 + n * 1000, files };
}

/** What `git log -z --name-only --format=%x1e%H%x1f%ct` prints. */
function gitOutput(commits: { sha: string; seconds: number; files: string[] }[]): string {
  return commits
    .map(
      (c) =>
        `\x1e${c.sha}\x1f${c.seconds}\0` +
        (c.files.length ? '\n' : '') +
        c.files.map((f) => `${f}\0`).join(''),
    )
    .join('');
}

describe('git co-commits', () => {
  it('should ask git for non-merge commits with NUL-terminated names, bounded', () => {
    const args = gitLogArgs({ maxCommits: 10, since: '2025-01-01' });
    expect(args).toEqual(expect.arrayContaining(['log', '--no-merges', '--name-only', '-z']));
    expect(args).toContain('--max-count=10');
    expect(args).toContain('--since=2025-01-01');
    expect(args.at(-1)).toBe('--');
    expect(gitLogArgs({ maxCommits: 5 }).some((a) => a.startsWith('--since'))).toBe(false);
  });

  it('should parse commits, with names holding spaces, newlines and non-ASCII verbatim', () => {
    const output = gitOutput([
      { sha: SHA(2), seconds: 1_700_000_200, files: ['src/a b.ts', 'docs/é\nx.md'] },
      { sha: SHA(1), seconds: 1_700_000_100, files: [] },
    ]);
    expect(parseGitLog(output)).toEqual([
      { sha: SHA(2), committedAt: 1_700_000_200_000, files: ['src/a b.ts', 'docs/é\nx.md'] },
      { sha: SHA(1), committedAt: 1_700_000_100_000, files: [] },
    ]);
    expect(parseGitLog('')).toEqual([]);
    expect(() => parseGitLog('\x1enot-a-sha\x1f12\0')).toThrow(/unexpected git log record/);
  });

  it('should normalise paths, drop lock files and duplicates, and skip bulk commits', () => {
    const prepared = prepareCommit(
      commit(1, ['./src/b.ts', 'src/a.ts', 'src/a.ts', 'package-lock.json', 'web/yarn.lock']),
      SETTINGS,
    );
    expect(prepared).toMatchObject({
      files: ['src/a.ts', 'src/b.ts'],
      skipped: null,
      generatedPaths: 2,
      rejectedPaths: 0,
    });
    const bulk = prepareCommit(commit(2, ['a', 'b', 'c', 'd', 'e']), SETTINGS);
    expect(bulk).toMatchObject({ files: [], skipped: 'too_many_files' });
    expect(prepareCommit(commit(3, ['yarn.lock']), SETTINGS).skipped).toBe('no_files');
    expect(prepareCommit(commit(4, ['../outside.ts', 'ok.ts']), SETTINGS)).toMatchObject({
      files: ['ok.ts'],
      rejectedPaths: 1,
    });
  });

  it('should write a commit as a session with a touch per file and a same-step pair per pair', () => {
    const stats = emptyCoCommitStats();
    const [{ batch }] = [
      ...coCommitBatches(
        SCOPE,
        [commit(1, ['src/auth/b.ts', 'src/auth/a.ts', 'README.md'])],
        SETTINGS,
        stats,
      ),
    ];
    const sessionId = coCommitSessionId(SCOPE, SHA(1));
    expect(sessionId).toBe(`commit:${SHA(1)}@acme/shop`);
    expect(batch.sessions).toEqual([
      expect.objectContaining({
        sessionId,
        agentId: 'git',
        toolCalls: 0,
        endedAt: 1_700_000_001_000,
      }),
    ]);
    expect(batch.touches.map((t) => [t.path, t.module, t.edits])).toEqual([
      ['README.md', '.', 1],
      ['src/auth/a.ts', 'src/auth', 1],
      ['src/auth/b.ts', 'src/auth', 1],
    ]);
    expect(batch.newlyTouchedFiles.map((f) => f.path)).toEqual(batch.touches.map((t) => t.path));
    expect(batch.sessionPairs.map((p) => [p.fileA, p.fileB])).toEqual([
      ['README.md', 'src/auth/a.ts'],
      ['README.md', 'src/auth/b.ts'],
      ['src/auth/a.ts', 'src/auth/b.ts'],
    ]);
    expect(batch.sessionPairs[0]).toMatchObject({
      rawCount: 1,
      timedCount: 0,
      timeDeltaSumMs: 0,
      sameStep: 1,
      aThenB: 0,
      bThenA: 0,
    });
    expect(stats).toMatchObject({
      commitsRead: 1,
      commitsUsed: 1,
      touches: 3,
      pairs: 3,
      batches: 1,
    });
  });

  it('should batch whole commits until the row bound, and count what it skipped', () => {
    const commits = [
      commit(1, ['a', 'b', 'c']), // 3 touches + 3 pairs
      commit(2, ['a', 'b', 'c', 'd', 'e']), // bulk
      commit(3, ['a']), // 1 touch, no pair
      commit(4, ['c', 'd']), // 2 + 1
      commit(5, []),
    ];
    const stats = emptyCoCommitStats();
    const batches = [
      ...coCommitBatches(SCOPE, commits, { ...SETTINGS, maxRowsPerBatch: 5 }, stats),
    ];
    expect(batches.map((b) => [b.commits, b.batch.sessions.length])).toEqual([
      [1, 1],
      [4, 2],
    ]);
    expect(stats).toEqual({
      commitsRead: 5,
      commitsUsed: 3,
      skippedTooManyFiles: 1,
      skippedNoFiles: 1,
      rejectedPaths: 0,
      generatedPaths: 0,
      touches: 6,
      pairs: 4,
      batches: 2,
    });
  });

  it('should produce the same rows on a re-run (the facts a store upserts)', () => {
    const commits = [commit(1, ['a', 'b']), commit(2, ['b', 'c'])];
    const run = () => [...coCommitBatches(SCOPE, commits, SETTINGS)].map((b) => b.batch);
    expect(run()).toEqual(run());
  });

  it('should weigh pairs as the core does for co-commits: sessions with both over either', () => {
    const commits = [
      commit(1, ['a', 'b']),
      commit(2, ['a', 'b', 'c']),
      commit(3, ['a', 'c']),
      commit(4, ['d', 'b']),
    ];
    const fromRows = emptyCoAccessAggregate();
    for (const { batch } of coCommitBatches(SCOPE, commits, SETTINGS)) {
      applyGraphBatch(fromRows, batch);
    }
    const folded = emptyCoAccessAggregate();
    for (const c of commits) applyCoCommit(folded, c.files, c.committedAt);
    const rule = observerSettings();
    expect(topNeighbours(fromRows, 'a', 5, rule)).toEqual(topNeighbours(folded, 'a', 5, rule));
    // a–c: both in 2 commits, either in 3 (a in 3, c in 2); a–b: 2 of 4 (a in 3, b in 3).
    expect(topNeighbours(fromRows, 'a', 5, rule)).toMatchObject([
      { file: 'c', sessionCount: 2, weight: 2 / 3, direction: 'both' },
      { file: 'b', sessionCount: 2, weight: 2 / 4, direction: 'both' },
    ]);
  });
});
