/**
 * Runs a segmenter over the segmentation benchmark and scores it.
 *
 *   import { runSegmentationBenchmark } from '../test/bench/segmentation/run';
 *   const result = await runSegmentationBenchmark({ segment: mySegmenter, label: 'keyword' });
 *   console.log(result.text);
 *
 * As a program (see README.md: `bash test/bench/segmentation/run.sh [flags]`) it scores the
 * trivial baselines, plus any `--command "…"` that behaves like `engram segment`.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { baselineSegmenters, type NamedSegmenter } from './baselines';
import {
  evaluateSegmentation,
  formatSegmentationReport,
  formatSessionCategoryTable,
  type SegmentationReport,
} from './evaluate';
import {
  DEFAULT_SEED,
  DEFAULT_SESSIONS,
  ensureDataset,
  readJsonlLines,
  repoRoot,
  type DatasetStats,
} from './generate-sessions';
import type { Decision, GoldLabel, Segmenter } from './types';

export type { Decision, GoldLabel, Segmenter } from './types';

export interface RunSegmentationBenchmarkOptions {
  /** The segmenter under test: PromptSubmitted JSON lines in, one Decision per line out. */
  segment: Segmenter;
  /** A name for the report ("keyword", "hybrid", "engram segment"). */
  label: string;
  /** Generator seed (default 20260218) and size (default 360 sessions). */
  seed?: number | string;
  sessions?: number;
  /** Where the generated files live (default `<repo>/.cache/bench/segmentation`). */
  cacheDir?: string;
  /** Regenerate even if an intact cached copy exists. */
  regenerate?: boolean;
  /** Also score the hand-labelled seed 000 examples (default true). */
  seedExamples?: boolean;
  /** A fixed Pk/WindowDiff window for every session (default: per session). */
  k?: number;
}

export interface SegmentationBenchmarkResult {
  label: string;
  dataset: {
    sessionsPath: string;
    labelsPath: string;
    reused: boolean;
    stats: DatasetStats;
  };
  /** Scores on the synthetic sessions. */
  report: SegmentationReport;
  /** Scores on the seed 000 examples (null when disabled). */
  seedExamples: SegmentationReport | null;
  /** Wall time of the `segment` call on the synthetic sessions. */
  timing: { prompts: number; elapsedMs: number; promptsPerSecond: number };
  /** The report as a text table. */
  text: string;
}

function parseLabels(lines: readonly string[]): GoldLabel[] {
  return lines.map((line) => JSON.parse(line) as GoldLabel);
}

/** The hand-labelled seed 000 examples (committed beside this file). */
export function seedExampleFiles(): { sessionsPath: string; labelsPath: string } {
  const dir = join(repoRoot(), 'test', 'bench', 'segmentation');
  return {
    sessionsPath: join(dir, 'seed-examples.jsonl'),
    labelsPath: join(dir, 'seed-examples.labels.jsonl'),
  };
}

/**
 * Generates (or reuses) the dataset, runs `segment` on it and on the seed examples, and scores
 * both.
 */
export async function runSegmentationBenchmark(
  options: RunSegmentationBenchmarkOptions,
): Promise<SegmentationBenchmarkResult> {
  const files = ensureDataset({
    seed: options.seed ?? DEFAULT_SEED,
    sessions: options.sessions ?? DEFAULT_SESSIONS,
    cacheDir: options.cacheDir,
    regenerate: options.regenerate,
  });
  const prompts = readJsonlLines(files.sessionsPath);
  const labels = parseLabels(readJsonlLines(files.labelsPath));
  const started = performance.now();
  const decisions = await options.segment(prompts);
  const elapsedMs = performance.now() - started;
  const report = evaluateSegmentation(labels, decisions, { k: options.k });

  let seedExamples: SegmentationReport | null = null;
  if (options.seedExamples !== false) {
    const seed = seedExampleFiles();
    seedExamples = evaluateSegmentation(
      parseLabels(readJsonlLines(seed.labelsPath)),
      await options.segment(readJsonlLines(seed.sessionsPath)),
      { k: options.k },
    );
  }
  const text = [
    formatSegmentationReport([{ label: options.label, report }], 'Synthetic sessions'),
    '',
    `${options.label}: ${prompts.length} prompts in ${elapsedMs.toFixed(0)} ms`,
    ...(seedExamples
      ? [
          '',
          formatSegmentationReport(
            [{ label: options.label, report: seedExamples }],
            'Seed 000 examples',
          ),
        ]
      : []),
  ].join('\n');
  return {
    label: options.label,
    dataset: {
      sessionsPath: files.sessionsPath,
      labelsPath: files.labelsPath,
      reused: files.reused,
      stats: files.stats,
    },
    report,
    seedExamples,
    timing: {
      prompts: prompts.length,
      elapsedMs,
      promptsPerSecond:
        elapsedMs > 0 ? (prompts.length / elapsedMs) * 1000 : Number.POSITIVE_INFINITY,
    },
    text,
  };
}

/**
 * A Segmenter that pipes the prompts through a command behaving like `engram segment`
 * (PromptSubmitted JSON lines on stdin, one decision JSON line per prompt on stdout; other
 * stdout lines are ignored, stderr is passed through).
 */
export function commandSegmenter(
  command: string,
  args: readonly string[] = [],
  options: { cwd?: string } = {},
): Segmenter {
  return (promptsJsonl) =>
    new Promise<Decision[]>((resolve, reject) => {
      const child = spawn(command, [...args], {
        cwd: options.cwd ?? repoRoot(),
        stdio: ['pipe', 'pipe', 'inherit'],
      });
      const chunks: Buffer[] = [];
      child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
      child.on('error', reject);
      child.on('close', (code) => {
        if (code !== 0) {
          reject(new Error(`${command} ${args.join(' ')} exited with ${code}`));
          return;
        }
        try {
          const decisions = Buffer.concat(chunks)
            .toString('utf8')
            .split('\n')
            .filter((line) => line.trimStart().startsWith('{'))
            .map((line) => JSON.parse(line) as Decision);
          resolve(decisions);
        } catch (error) {
          reject(error instanceof Error ? error : new Error(String(error)));
        }
      });
      child.stdin.on('error', reject);
      child.stdin.end(promptsJsonl.join('\n') + '\n');
    });
}

interface CliSummary {
  label: string;
  pk: number;
  windowDiff: number;
  precision: number;
  recall: number;
  f1: number;
  promptsPerSecond: number;
  seedExamplesF1: number | null;
}

async function main(argv: string[]): Promise<void> {
  const value = (flag: string): string | undefined => {
    const at = argv.indexOf(flag);
    return at >= 0 ? argv[at + 1] : undefined;
  };
  const commands = argv
    .map((arg, index) => (arg === '--command' ? argv[index + 1] : undefined))
    .filter((command): command is string => command !== undefined);
  const sessions = value('--sessions');
  const common = {
    seed: value('--seed') ?? DEFAULT_SEED,
    sessions: sessions === undefined ? DEFAULT_SESSIONS : Number(sessions),
    regenerate: argv.includes('--regenerate'),
  };
  const files = ensureDataset(common);
  const { stats } = files;
  const segmenters: NamedSegmenter[] = [
    ...baselineSegmenters(
      stats.promptsPerTask.mean,
      stats.boundaries / (stats.prompts - stats.sessions),
    ),
    ...commands.map((command) => {
      const [program, ...args] = command.split(/\s+/).filter(Boolean);
      return { label: command, segment: commandSegmenter(program, args) };
    }),
  ];
  const results: SegmentationBenchmarkResult[] = [];
  for (const { label, segment } of segmenters) {
    results.push(await runSegmentationBenchmark({ ...common, regenerate: false, label, segment }));
  }
  const synthetic = results.map(({ label, report }) => ({ label, report }));
  const seeds = results.flatMap(({ label, seedExamples }) =>
    seedExamples ? [{ label, report: seedExamples }] : [],
  );
  const out = process.stdout;
  out.write(
    `dataset: ${files.sessionsPath} (${files.reused ? 'reused' : 'generated'}; seed ${stats.seed}, ` +
      `${stats.sessions} sessions, ${stats.prompts} prompts, ${stats.boundaries} boundaries, ` +
      `terse share ${stats.terseShare})\n\n`,
  );
  out.write(`${formatSegmentationReport(synthetic, 'Synthetic sessions')}\n\n`);
  out.write(
    `Sessions containing each hard case (F1 / Pk)\n${formatSessionCategoryTable(synthetic)}\n\n`,
  );
  out.write(`${formatSegmentationReport(seeds, 'Seed 000 examples')}\n`);
  if (argv.includes('--json')) {
    const summary: CliSummary[] = results.map((result) => ({
      label: result.label,
      pk: result.report.overall.pk,
      windowDiff: result.report.overall.windowDiff,
      precision: result.report.overall.boundaries.precision,
      recall: result.report.overall.boundaries.recall,
      f1: result.report.overall.boundaries.f1,
      promptsPerSecond: result.timing.promptsPerSecond,
      seedExamplesF1: result.seedExamples?.overall.boundaries.f1 ?? null,
    }));
    out.write(`${JSON.stringify({ dataset: stats, results: summary })}\n`);
  }
}

if (typeof require !== 'undefined' && require.main === module) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    process.stderr.write(
      `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exitCode = 1;
  });
}
