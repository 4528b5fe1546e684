// Usefulness of the co-access graph (issue #4, "Tests and measurements"): given the first file a
// new session touches, how many of the files it goes on to touch are in the graph's top 5
// neighbours, against a most-frequently-touched baseline.
//
// Data: a repository's own `git log` (default: this repository; public and reproducible), commits
// as sessions, split by time: the oldest 80 % build the graph through bootstrap's pure function
// (coCommitBatches → the rows `engram bootstrap` writes → the core's topNeighbours), the newest
// 20 % are the evaluated sessions. Each evaluated commit goes through the same filters (lock
// files out, bulk commits of more than --max-files-per-commit files skipped) and needs 2+ files.
// Its first file is the alphabetically first one (deterministic; git lists no order of work), the
// targets are all its other files, recall@5 = targets among the 5 predictions / targets,
// averaged over commits. The baseline predicts the 5 files touched by most training commits
// (the first file excluded). "graph+fill" tops up the graph's list with the baseline when the
// file has fewer than 5 neighbours (a cold file has none).
//
// Run: bash test/bench/observe-usefulness.sh [--repo DIR] [--max-commits N] [--json]
import {
  emptyCoAccessAggregate,
  observerSettings,
  topNeighbours,
  type CoAccessAggregate,
} from '@engram/core';
import { execFileSync } from 'node:child_process';
import { cpus } from 'node:os';
import {
  applyGraphBatch,
  coCommitBatches,
  DEFAULT_CO_COMMIT_SETTINGS,
  gitLogArgs,
  parseGitLog,
  prepareCommit,
  type CoCommitSettings,
  type GitCommit,
} from '../../libs/core/src/observation/git-co-commits';

const K = 5;
const SCOPE = { tenantId: 'bench', projectId: 'usefulness' };

export interface UsefulnessFigures {
  benchmark: 'observe-usefulness';
  repo: string;
  commits: number;
  trainCommits: number;
  evalCommits: number;
  /** Evaluated sessions: evaluation commits that pass the filters with 2+ files. */
  cases: number;
  /** Cases whose first file has at least one neighbour in the graph. */
  casesWithNeighbours: number;
  recallAt5Graph: number;
  recallAt5GraphFill: number;
  recallAt5Baseline: number;
  hitRateAt5Graph: number;
  hitRateAt5Baseline: number;
  /** The same with every file of each evaluated commit as the first file in turn. */
  everyFileCases: number;
  everyFileRecallAt5Graph: number;
  everyFileRecallAt5GraphFill: number;
  everyFileRecallAt5Baseline: number;
  buildSeconds: number;
  buildCommitsPerSecond: number;
  cores: number;
}

export function evaluateUsefulness(
  commitsNewestFirst: GitCommit[],
  settings: CoCommitSettings,
  trainShare = 0.8,
): Omit<UsefulnessFigures, 'repo' | 'cores'> {
  // Oldest first; git's order breaks ties of equal commit times.
  const commits = [...commitsNewestFirst].reverse();
  const split = Math.floor(commits.length * trainShare);
  const train = commits.slice(0, split);
  const started = process.hrtime.bigint();
  const graph = emptyCoAccessAggregate();
  for (const { batch } of coCommitBatches(SCOPE, train, settings)) applyGraphBatch(graph, batch);
  const buildSeconds = Number(process.hrtime.bigint() - started) / 1e9;
  const popular = popularFiles(graph);
  const evalCommits = commits
    .slice(split)
    .map((commit) => prepareCommit(commit, settings).files)
    .filter((files) => files.length >= 2);
  const alphabetical = score(
    graph,
    popular,
    evalCommits.map((files) => [files[0], files]),
  );
  // Every file of each commit as the first one: less arbitrary than alphabetical, more cases.
  const everyFile = score(
    graph,
    popular,
    evalCommits.flatMap((files) => files.map((first) => [first, files] as [string, string[]])),
  );
  return {
    benchmark: 'observe-usefulness',
    commits: commits.length,
    trainCommits: train.length,
    evalCommits: commits.length - split,
    cases: alphabetical.cases,
    casesWithNeighbours: alphabetical.covered,
    recallAt5Graph: alphabetical.graph,
    recallAt5GraphFill: alphabetical.fill,
    recallAt5Baseline: alphabetical.baseline,
    hitRateAt5Graph: alphabetical.graphHits,
    hitRateAt5Baseline: alphabetical.baselineHits,
    everyFileCases: everyFile.cases,
    everyFileRecallAt5Graph: everyFile.graph,
    everyFileRecallAt5GraphFill: everyFile.fill,
    everyFileRecallAt5Baseline: everyFile.baseline,
    buildSeconds: Number(buildSeconds.toFixed(4)),
    buildCommitsPerSecond: buildSeconds === 0 ? 0 : Math.round(train.length / buildSeconds),
  };
}

/** Mean recall@5 (and hit rate) over cases of [first file, the session's files]. */
function score(graph: CoAccessAggregate, popular: string[], cases: [string, string[]][]) {
  const rule = observerSettings();
  const sums = { graph: 0, fill: 0, baseline: 0, graphHits: 0, baselineHits: 0 };
  let covered = 0;
  for (const [first, files] of cases) {
    const targets = files.filter((f) => f !== first);
    const neighbours = topNeighbours(graph, first, K, rule).map((n) => n.file);
    const baseline = popular.filter((f) => f !== first).slice(0, K);
    const filled = [...neighbours, ...baseline.filter((f) => !neighbours.includes(f))].slice(0, K);
    const hits = (predicted: string[]) => targets.filter((t) => predicted.includes(t)).length;
    sums.graph += hits(neighbours) / targets.length;
    sums.fill += hits(filled) / targets.length;
    sums.baseline += hits(baseline) / targets.length;
    sums.graphHits += hits(neighbours) > 0 ? 1 : 0;
    sums.baselineHits += hits(baseline) > 0 ? 1 : 0;
    covered += neighbours.length > 0 ? 1 : 0;
  }
  const mean = (sum: number) => (cases.length === 0 ? 0 : Number((sum / cases.length).toFixed(4)));
  return {
    cases: cases.length,
    covered,
    graph: mean(sums.graph),
    fill: mean(sums.fill),
    baseline: mean(sums.baseline),
    graphHits: mean(sums.graphHits),
    baselineHits: mean(sums.baselineHits),
  };
}

/** Files by training sessions touching them, most first (ties by path: deterministic). */
function popularFiles(graph: CoAccessAggregate): string[] {
  return Object.entries(graph.files)
    .sort(([a, x], [b, y]) => y.sessionCount - x.sessionCount || (a < b ? -1 : 1))
    .map(([file]) => file);
}

function argValue(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i === -1 ? undefined : args[i + 1];
}

function main(): void {
  const args = process.argv.slice(2);
  // The wrapper script runs from the repository root.
  const repo = argValue(args, '--repo') ?? process.cwd();
  const maxCommits = Number(argValue(args, '--max-commits') ?? 100_000);
  const settings = {
    ...DEFAULT_CO_COMMIT_SETTINGS,
    maxFilesPerCommit: Number(
      argValue(args, '--max-files-per-commit') ?? DEFAULT_CO_COMMIT_SETTINGS.maxFilesPerCommit,
    ),
  };
  const output = execFileSync('git', ['-C', repo, ...gitLogArgs({ maxCommits })], {
    encoding: 'utf8',
    maxBuffer: 1 << 30,
  });
  const figures: UsefulnessFigures = {
    ...evaluateUsefulness(parseGitLog(output), settings),
    repo,
    cores: cpus().length,
  };
  if (!args.includes('--json')) {
    console.log(
      `observe usefulness on ${repo}: ${figures.commits} commits, graph from the oldest ` +
        `${figures.trainCommits}, ${figures.cases} evaluated sessions (${figures.casesWithNeighbours} ` +
        `with a known first file)\n` +
        `  recall@5  graph ${figures.recallAt5Graph}  graph+fill ${figures.recallAt5GraphFill}  ` +
        `most-touched baseline ${figures.recallAt5Baseline}\n` +
        `  hit@5     graph ${figures.hitRateAt5Graph}  baseline ${figures.hitRateAt5Baseline}\n` +
        `  every file as the first (${figures.everyFileCases} cases): recall@5 graph ` +
        `${figures.everyFileRecallAt5Graph}  graph+fill ${figures.everyFileRecallAt5GraphFill}  ` +
        `baseline ${figures.everyFileRecallAt5Baseline}`,
    );
  }
  // The --json contract of `engram bench`: the last line is one JSON object of the figures.
  console.log(JSON.stringify(figures));
}

if (require.main === module) main();
