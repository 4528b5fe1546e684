import type {
  GraphScope,
  GraphSessionPairRow,
  GraphTouchRow,
  ObserverGraphBatch,
} from '../ports/observer-graph';
import { emptyGraphBatch } from '../ports/observer-graph';
import { pairKeyOf } from './co-access-detection';
import type { CoAccessAggregate } from './co-access-graph';
import { moduleOf, normaliseProjectPath, ProjectPathError } from './project-paths';

/**
 * Cold start (`engram bootstrap`, SPEC §5): a repository's `git log` as co-access facts, so the
 * first session already has a graph. Each commit is a pseudo-session whose files were all
 * touched together, in no order. Its facts are written through the observer's own graph port as
 * the observer writes a session's — one TOUCHED row per file, one per-session pair row per pair —
 * so the weights stay "sessions with both / sessions with either" over commits and real sessions
 * alike, and writing the same commit again (a re-run) sets the same values: nothing changes.
 */

/** One commit of `git log --name-only`: its files as git prints them (relative to the top level). */
export interface GitCommit {
  sha: string;
  /** Committer time, epoch millis: when the change landed, the order `git log` walks. */
  committedAt: number;
  files: string[];
}

export interface CoCommitSettings {
  /** Bulk commits (formatting, vendoring, mass renames) say nothing about co-access. */
  maxFilesPerCommit: number;
  moduleDepth: number;
  /** Whole commits per graph batch until the batch holds at least this many rows. */
  maxRowsPerBatch: number;
}

export const DEFAULT_CO_COMMIT_SETTINGS: Readonly<CoCommitSettings> = Object.freeze({
  maxFilesPerCommit: 30,
  moduleDepth: 2,
  // Chosen: a commit of 30 files is 465 rows, so a batch holds ~10–1,000 commits; one Neo4j
  // transaction of this size commits in well under a second on two cores.
  maxRowsPerBatch: 5_000,
});

/**
 * Generated lock files move with every dependency change: they would become every file's top
 * neighbour without anyone ever opening them to do the work.
 */
const GENERATED_FILES = new Set([
  'package-lock.json',
  'npm-shrinkwrap.json',
  'yarn.lock',
  'pnpm-lock.yaml',
  'bun.lockb',
  'Cargo.lock',
  'Gemfile.lock',
  'poetry.lock',
  'Pipfile.lock',
  'uv.lock',
  'composer.lock',
  'go.sum',
]);

export function isGeneratedFile(path: string): boolean {
  return GENERATED_FILES.has(path.slice(path.lastIndexOf('/') + 1));
}

// Record and field separators no path or SHA contains; -z makes git NUL-terminate every path,
// so names with newlines, tabs or quotes arrive verbatim (core.quotePath=false: no octal escapes).
const RECORD = '\x1e';
const FIELD = '\x1f';

/** The arguments of the `git` call whose output `parseGitLog` reads. */
export function gitLogArgs(options: { maxCommits: number; since?: string }): string[] {
  return [
    '-c',
    'core.quotePath=false',
    'log',
    '--no-merges',
    '--name-only',
    '-z',
    `--format=${RECORD}%H${FIELD}%ct`,
    `--max-count=${options.maxCommits}`,
    ...(options.since === undefined ? [] : [`--since=${options.since}`]),
    '--',
  ];
}

/** Commits as `git log` prints them with `gitLogArgs`: newest first. */
export function parseGitLog(output: string): GitCommit[] {
  const commits: GitCommit[] = [];
  for (const record of output.split(RECORD)) {
    if (record.trim() === '') continue;
    const headerEnd = record.indexOf('\0');
    const header = headerEnd === -1 ? record : record.slice(0, headerEnd);
    const [sha, seconds] = header.trim().split(FIELD);
    if (!/^[0-9a-f]{7,64}$/.test(sha ?? '') || !/^\d+$/.test(seconds ?? '')) {
      throw new Error(`unexpected git log record: ${JSON.stringify(header.slice(0, 80))}`);
    }
    const body = headerEnd === -1 ? '' : record.slice(headerEnd + 1).replace(/^\n/, '');
    const files = body.split('\0').filter((path) => path !== '');
    commits.push({ sha, committedAt: Number(seconds) * 1000, files });
  }
  return commits;
}

export type CommitSkipReason = 'no_files' | 'too_many_files';

/** A commit's files as the graph stores them, or why the commit says nothing. */
export interface PreparedCommit {
  sha: string;
  committedAt: number;
  /** Normalised, unique, sorted. */
  files: string[];
  skipped: CommitSkipReason | null;
  rejectedPaths: number;
  generatedPaths: number;
}

export function prepareCommit(commit: GitCommit, settings: CoCommitSettings): PreparedCommit {
  const files = new Set<string>();
  let rejectedPaths = 0;
  let generatedPaths = 0;
  for (const raw of commit.files) {
    const path = projectPathOrNull(raw);
    if (path === null) rejectedPaths += 1;
    else if (isGeneratedFile(path)) generatedPaths += 1;
    else files.add(path);
  }
  const sorted = [...files].sort();
  const skipped =
    sorted.length === 0
      ? 'no_files'
      : sorted.length > settings.maxFilesPerCommit
        ? 'too_many_files'
        : null;
  return {
    sha: commit.sha,
    committedAt: commit.committedAt,
    files: skipped === null ? sorted : [],
    skipped,
    rejectedPaths,
    generatedPaths,
  };
}

/** git prints paths relative to the top level, so no root is needed; `..` or `/` cannot occur. */
function projectPathOrNull(raw: string): string | null {
  try {
    return normaliseProjectPath(raw, null);
  } catch (error) {
    if (error instanceof ProjectPathError) return null;
    throw error;
  }
}

/**
 * The pseudo-session of a commit. Session ids are global in the graph (`Session {id}`), and two
 * projects (or tenants) may bootstrap from the same history (a fork, a mirror): the scope is part
 * of the id so each keeps its own sessions.
 */
export function coCommitSessionId(scope: GraphScope, sha: string): string {
  return `commit:${sha}@${scope.tenantId}/${scope.projectId}`;
}

export const CO_COMMIT_AGENT_ID = 'git';

/** The graph rows of one commit: a session, a TOUCHED per file, a pair row per file pair. */
export function addCommitRows(
  batch: ObserverGraphBatch,
  scope: GraphScope,
  commit: PreparedCommit,
  moduleDepth: number,
): void {
  if (commit.skipped !== null) return;
  const sessionId = coCommitSessionId(scope, commit.sha);
  const at = commit.committedAt;
  batch.sessions.push({
    ...scope,
    sessionId,
    agentId: CO_COMMIT_AGENT_ID,
    startedAt: at,
    lastActivityAt: at,
    endedAt: at,
    // No tool call was observed: a commit is not an agent's work.
    toolCalls: 0,
  });
  for (const path of commit.files) {
    batch.touches.push({
      ...scope,
      sessionId,
      path,
      module: moduleOf(path, moduleDepth),
      reads: 0,
      edits: 1,
      accesses: 1,
      firstAt: at,
      lastAt: at,
    } satisfies GraphTouchRow);
    batch.newlyTouchedFiles.push({ ...scope, path });
  }
  const files = commit.files;
  for (let i = 0; i < files.length; i += 1) {
    for (let j = i + 1; j < files.length; j += 1) {
      batch.sessionPairs.push(coCommitPair(scope, sessionId, files[i], files[j], at));
    }
  }
}

/** As the core's applyCoCommit: one observation, same step (no order, no time delta). */
function coCommitPair(
  scope: GraphScope,
  sessionId: string,
  fileA: string,
  fileB: string,
  at: number,
): GraphSessionPairRow {
  return {
    ...scope,
    sessionId,
    fileA,
    fileB,
    rawCount: 1,
    timeDeltaSumMs: 0,
    timedCount: 0,
    aThenB: 0,
    bThenA: 0,
    sameStep: 1,
    lastObservedAt: at,
  };
}

export interface CoCommitStats {
  commitsRead: number;
  /** Commits written as sessions (single-file commits included: they count in "either"). */
  commitsUsed: number;
  skippedTooManyFiles: number;
  skippedNoFiles: number;
  rejectedPaths: number;
  generatedPaths: number;
  touches: number;
  pairs: number;
  batches: number;
}

export function emptyCoCommitStats(): CoCommitStats {
  return {
    commitsRead: 0,
    commitsUsed: 0,
    skippedTooManyFiles: 0,
    skippedNoFiles: 0,
    rejectedPaths: 0,
    generatedPaths: 0,
    touches: 0,
    pairs: 0,
    batches: 0,
  };
}

/**
 * Graph batches of whole commits, bounded by `maxRowsPerBatch` (a commit is never split, so an
 * interrupted run leaves complete sessions and a re-run completes the rest). `stats` is updated
 * as batches are produced; `commits` in each batch is how many commits it consumed (skipped ones
 * included), for progress.
 */
export function* coCommitBatches(
  scope: GraphScope,
  commits: Iterable<GitCommit>,
  settings: CoCommitSettings,
  stats: CoCommitStats = emptyCoCommitStats(),
): Generator<{ batch: ObserverGraphBatch; commits: number }> {
  let batch = emptyGraphBatch();
  let consumed = 0;
  for (const commit of commits) {
    const prepared = prepareCommit(commit, settings);
    countCommit(stats, prepared);
    addCommitRows(batch, scope, prepared, settings.moduleDepth);
    consumed += 1;
    if (batch.touches.length + batch.sessionPairs.length >= settings.maxRowsPerBatch) {
      stats.batches += 1;
      yield { batch, commits: consumed };
      batch = emptyGraphBatch();
      consumed = 0;
    }
  }
  if (consumed > 0) {
    stats.batches += batch.sessions.length > 0 ? 1 : 0;
    yield { batch, commits: consumed };
  }
}

function countCommit(stats: CoCommitStats, commit: PreparedCommit): void {
  stats.commitsRead += 1;
  stats.rejectedPaths += commit.rejectedPaths;
  stats.generatedPaths += commit.generatedPaths;
  if (commit.skipped === 'too_many_files') stats.skippedTooManyFiles += 1;
  if (commit.skipped === 'no_files') stats.skippedNoFiles += 1;
  if (commit.skipped !== null) return;
  const n = commit.files.length;
  stats.commitsUsed += 1;
  stats.touches += n;
  stats.pairs += (n * (n - 1)) / 2;
}

/**
 * The project's co-access aggregate from graph rows, as the stores aggregate their facts (each
 * fact applied once): what a neighbours query sees after the batches are written. For offline
 * evaluation with the core's `topNeighbours`.
 */
export function applyGraphBatch(aggregate: CoAccessAggregate, batch: ObserverGraphBatch): void {
  for (const touch of batch.touches) {
    (aggregate.files[touch.path] ??= { sessionCount: 0 }).sessionCount += 1;
  }
  for (const row of batch.sessionPairs) {
    const key = pairKeyOf(row.fileA, row.fileB);
    let pair = aggregate.pairs[key];
    if (pair === undefined) {
      pair = { ...zeroPair(), fileA: row.fileA, fileB: row.fileB };
      aggregate.pairs[key] = pair;
      (aggregate.adjacency[row.fileA] ??= []).push(key);
      (aggregate.adjacency[row.fileB] ??= []).push(key);
    }
    pair.sessionCount += 1;
    pair.rawCount += row.rawCount;
    pair.timeDeltaSumMs += row.timeDeltaSumMs;
    pair.timedCount += row.timedCount;
    pair.aThenB += row.aThenB;
    pair.bThenA += row.bThenA;
    pair.sameStep += row.sameStep;
    pair.lastObservedAt = Math.max(pair.lastObservedAt, row.lastObservedAt);
  }
}

function zeroPair() {
  return {
    sessionCount: 0,
    rawCount: 0,
    timeDeltaSumMs: 0,
    timedCount: 0,
    aThenB: 0,
    bThenA: 0,
    sameStep: 0,
    lastObservedAt: 0,
  };
}
