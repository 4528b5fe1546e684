/**
 * `npm run bench:quality` (issue #23): segmentation, recall ranking, file prediction and
 * distillation measured on the public development data in ../shared/datasets, each with its plain
 * baselines in the same run, printed as one table. `--json`: the last line is one JSON object.
 * `--only segmentation,files`: a subset. `--quick`: small slices (what the unit tier runs).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { runDistillQuality } from './distill';
import { runFilePredictionQuality } from './files';
import { runRecallQuality } from './recall';
import { runSegmentationQuality } from './segmentation';
import { runTruthQuality } from './truth';
import { qualityTable } from './table';
import type { QualityOptions, QualityRunner, QualitySection } from './types';

export const QUALITY_SECTIONS: Readonly<Record<string, QualityRunner>> = {
  segmentation: runSegmentationQuality,
  recall: runRecallQuality,
  files: runFilePredictionQuality,
  distill: runDistillQuality,
  truth: runTruthQuality,
};

export function defaultDatasetsDir(repoRoot = process.cwd()): string {
  return process.env.ENGRAM_DATASETS ?? resolve(repoRoot, '..', 'shared', 'datasets');
}

export async function runQuality(
  names: readonly string[],
  options: QualityOptions,
): Promise<QualitySection[]> {
  const sections: QualitySection[] = [];
  for (const name of names) {
    const runner = QUALITY_SECTIONS[name];
    if (!runner) {
      throw new Error(
        `unknown section ${name}; known: ${Object.keys(QUALITY_SECTIONS).join(', ')}`,
      );
    }
    const started = Date.now();
    options.log(`… ${name}`);
    sections.push(await runner(options));
    options.log(`  ${name} took ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
  return sections;
}

function flag(args: readonly string[], name: string): string | undefined {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
}

async function main(args: readonly string[]): Promise<void> {
  const json = args.includes('--json');
  const names = flag(args, '--only')?.split(',') ?? Object.keys(QUALITY_SECTIONS);
  const workDir = mkdtempSync(join(tmpdir(), 'engram-quality-'));
  const options: QualityOptions = {
    datasetsDir: flag(args, '--datasets') ?? defaultDatasetsDir(),
    workDir,
    quick: args.includes('--quick'),
    log: (line) => process.stderr.write(`${line}\n`),
  };
  try {
    const sections = await runQuality(names, options);
    console.log(qualityTable(sections));
    for (const section of sections) {
      for (const note of section.notes) console.log(`${section.area}: ${note}`);
    }
    if (json) console.log(JSON.stringify({ sections }));
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    process.exit(1);
  });
}
