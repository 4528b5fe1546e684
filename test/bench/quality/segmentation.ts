/**
 * Segmentation quality (issue #23, items 1 and 2): the public topic-shift dialogues of
 * ../shared/datasets fed to the SAME code path as `engram segment` (runSegment of
 * apps/engram/src/commands/segment.command.ts: PromptSubmitted lines in, decision lines out),
 * scored with Pk, WindowDiff and exact-boundary P/R/F1 against the plain baselines.
 *
 * Sets: `tiage/train` (tuning) and `tiage/dev` (reported), every utterance of both speakers;
 * `sgd/domain` and `sgd/intent`: user turns of the held-out SGD files (SGD_DEV_FILES), with the
 * tuning files (SGD_TUNING_FILES) as `sgd-tune/*`; `synthetic`: the generated coding sessions of
 * test/bench/segmentation.
 *
 * As a program (after run.sh has compiled it):
 *   node .cache/bench/quality-js/test/bench/quality/segmentation.js [--quick] [--sweep FILE]
 * `--sweep FILE`: a JSON list of `{label, mode, overrides}` scored on the tuning sets only.
 */
import { Readable, Writable } from 'node:stream';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { readFileSync } from 'node:fs';
import {
  DEFAULT_SEGMENT_MODE,
  runSegment,
  type EmbedBatch,
} from '../../../apps/engram/src/commands/segment.command';
import {
  DEFAULT_SEGMENTER_SETTINGS,
  type SegmentationMode,
  type SegmenterSettings,
} from '../../../libs/core/src/segmentation/segmenter-settings';
import { alwaysSplit, neverSplit } from '../segmentation/baselines';
import { evaluateSegmentation, type SegmentationReport } from '../segmentation/evaluate';
import { ensureDataset, generateDataset, readJsonlLines } from '../segmentation/generate-sessions';
import type { Decision, GoldLabel, Segmenter } from '../segmentation/types';
import {
  loadSgd,
  loadTiage,
  setTexts,
  SGD_DEV_FILES,
  SGD_TUNING_FILES,
  toSegmentationSet,
  type LabelledDialogue,
  type SegmentationSet,
} from './segmentation/datasets';
import { EmbeddingCache } from './segmentation/embedding-cache';
import {
  EXTRA_FEATURES,
  fitLearnedBoundary,
  fitSetOf,
  learnedDecider,
  scoreSet as fitScoreSet,
} from './segmentation/learned-fit';
import { LEARNED_BOUNDARY_FEATURES } from '../../../libs/core/src/segmentation/learned-boundary';
import type { QualityOptions, QualityRow, QualityRunner, QualitySection } from './types';

/** A segmenter configuration run through runSegment. */
export interface SegmenterMethod {
  label: string;
  mode: SegmentationMode;
  overrides?: Partial<SegmenterSettings>;
  /** hybrid run as on a machine without the embedding model (its lexical fallback). */
  withoutModel?: boolean;
}

/** Seed 000's rule as `engram segment --mode keyword` runs it. */
export const KEYWORD_METHOD: SegmenterMethod = { label: 'keyword (seed 000)', mode: 'keyword' };
/**
 * Hybrid as it was before issue #23: Jaccard blended half and half with the cosine to the mean
 * of the whole episode, threshold 0.3, at least 4 intent keywords.
 */
export const HYBRID_METHOD: SegmenterMethod = {
  label: 'hybrid',
  mode: 'hybrid',
  overrides: {
    hybridWindow: 0,
    hybridThreshold: 0.3,
    hybridEmbeddingWeight: 0.5,
    hybridMinIntentKeywords: 4,
  },
};
/** Hybrid's blended rule with its tuned settings (the default before the learned rule). */
export const BLEND_METHOD: SegmenterMethod = {
  label: 'hybrid blend',
  mode: 'hybrid',
  overrides: { hybridRule: 'blend' },
};
/** Whatever `engram segment` does without flags (hybrid with the default settings). */
export const DEFAULT_METHOD: SegmenterMethod = {
  label: 'engram default',
  mode: DEFAULT_SEGMENT_MODE,
};

/** The default as it runs before `npm run models:setup`: hybrid's lexical model. */
export const DEFAULT_WITHOUT_MODEL_METHOD: SegmenterMethod = {
  label: 'engram default, no model',
  mode: DEFAULT_SEGMENT_MODE,
  withoutModel: true,
};

const needsEmbeddings = (method: SegmenterMethod): boolean =>
  method.mode === 'hybrid' && !method.withoutModel;

/** runSegment over in-memory lines: the decisions exactly as `engram segment` prints them. */
export function cliSegmenter(method: SegmenterMethod, embed?: EmbedBatch): Segmenter {
  return async (promptsJsonl) => {
    const lines: string[] = [];
    let pending = '';
    const output = new Writable({
      write(chunk: Buffer, _encoding, done) {
        const parts = (pending + chunk.toString('utf8')).split('\n');
        pending = parts.pop() ?? '';
        lines.push(...parts);
        done();
      },
    });
    const errors: string[] = [];
    const errorSink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        errors.push(chunk.toString('utf8'));
        done();
      },
    });
    const summary = await runSegment({
      mode: method.mode,
      overrides: method.overrides,
      input: Readable.from(promptsJsonl.map((line) => `${line}\n`)),
      output,
      errors: errorSink,
      embed,
      batchSize: 512,
    });
    if (summary.rejected > 0) throw new Error(`segment rejected lines: ${errors.join('')}`);
    if (pending) lines.push(pending);
    return lines.filter(Boolean).map((line) => JSON.parse(line) as Decision);
  };
}

export interface ScoredMethod {
  report: SegmentationReport;
  elapsedMs: number;
}

export async function scoreSet(
  set: Pick<SegmentationSet, 'prompts' | 'labels'>,
  segment: Segmenter,
): Promise<ScoredMethod> {
  const started = performance.now();
  const decisions = await segment(set.prompts);
  const elapsedMs = performance.now() - started;
  return { report: evaluateSegmentation(set.labels, decisions), elapsedMs };
}

export function metricsOf(report: SegmentationReport): Record<string, number> {
  const { overall } = report;
  return {
    Pk: overall.pk,
    WindowDiff: overall.windowDiff,
    P: overall.boundaries.precision,
    R: overall.boundaries.recall,
    F1: overall.boundaries.f1,
  };
}

interface NamedSet {
  dataset: string;
  set: Pick<SegmentationSet, 'prompts' | 'labels'>;
  dialogues: number;
}

function dialogueSet(dataset: string, dialogues: readonly LabelledDialogue[]): NamedSet {
  const set = toSegmentationSet(dataset, dialogues);
  return { dataset, set, dialogues: set.dialogues };
}

/** The quick slice: the first few dialogues of a list. */
const QUICK_DIALOGUES = 5;

export function loadSets(
  datasetsDir: string,
  options: { quick: boolean; tuning: boolean; dev: boolean },
): NamedSet[] {
  const take = (dialogues: LabelledDialogue[]): LabelledDialogue[] =>
    options.quick ? dialogues.slice(0, QUICK_DIALOGUES) : dialogues;
  const sgdFiles = (files: readonly string[]): string[] =>
    // quick: one multi-service file is enough to have switches
    options.quick ? [files[files.length - 1]] : [...files];
  const sets: NamedSet[] = [];
  if (options.tuning) {
    sets.push(dialogueSet('tiage/train', take(loadTiage(datasetsDir, 'train'))));
    for (const label of ['domain', 'intent'] as const) {
      sets.push(
        dialogueSet(
          `sgd-tune/${label}`,
          take(loadSgd(datasetsDir, sgdFiles(SGD_TUNING_FILES), label)),
        ),
      );
    }
  }
  if (options.dev) {
    sets.push(dialogueSet('tiage/dev', take(loadTiage(datasetsDir, 'dev'))));
    for (const label of ['domain', 'intent'] as const) {
      sets.push(
        dialogueSet(`sgd/${label}`, take(loadSgd(datasetsDir, sgdFiles(SGD_DEV_FILES), label))),
      );
    }
  }
  return sets;
}

/**
 * The synthetic coding sessions of test/bench/segmentation: the cached default dataset, or for
 * `quick` a dozen sessions generated in memory (the cache keeps the full one).
 */
export function syntheticSet(quick: boolean): NamedSet {
  if (quick) {
    const dataset = generateDataset({ sessions: 12 });
    return {
      dataset: 'synthetic',
      set: {
        prompts: dataset.events.map((event) => JSON.stringify(event)),
        labels: dataset.labels,
      },
      dialogues: dataset.stats.sessions,
    };
  }
  const files = ensureDataset();
  const labels = readJsonlLines(files.labelsPath).map((line) => JSON.parse(line) as GoldLabel);
  return {
    dataset: 'synthetic',
    set: { prompts: readJsonlLines(files.sessionsPath), labels },
    dialogues: files.stats.sessions,
  };
}

export interface Embedding {
  embed: EmbedBatch;
  /** Why there is none, when there is none. */
  missing?: string;
  /** How long filling the cache took (texts embedded, ms). */
  filled?: { texts: number; ms: number };
}

/**
 * The MiniLM embedder behind a disk cache (.cache/bench/quality/embeddings), filled with every
 * text of the sets; null with the reason when the model is not installed.
 */
export async function prepareEmbeddings(
  texts: readonly string[],
  cacheDir: string,
  log: (line: string) => void,
): Promise<Embedding | { embed: null; missing: string }> {
  let embedder;
  try {
    const { createEmbedder } = await import('../../../libs/ai/src/create-embedder');
    embedder = await createEmbedder();
  } catch (error) {
    return { embed: null, missing: error instanceof Error ? error.message : String(error) };
  }
  const cache = new EmbeddingCache(cacheDir, embedder.id.replace(/[^\w.-]/g, '_'), embedder.dims);
  const started = performance.now();
  const unique = new Set(texts).size;
  if (unique > cache.size) log(`  embedding up to ${unique} texts (cache holds ${cache.size})`);
  const embedded = await cache.fill(texts, (batch) => embedder.embed(batch));
  return {
    embed: (batch) => cache.lookup(batch),
    filled: { texts: embedded, ms: performance.now() - started },
  };
}

export function repoRootOf(): string {
  return process.cwd();
}

function embeddingCacheDir(): string {
  return join(repoRootOf(), '.cache', 'bench', 'quality', 'embeddings');
}

export const runSegmentationQuality: QualityRunner = async (
  options: QualityOptions,
): Promise<QualitySection> => {
  const notes: string[] = [];
  const sets = [
    ...loadSets(options.datasetsDir, { quick: options.quick, tuning: true, dev: true }),
    syntheticSet(options.quick),
  ];
  const methods = [
    KEYWORD_METHOD,
    HYBRID_METHOD,
    BLEND_METHOD,
    DEFAULT_METHOD,
    DEFAULT_WITHOUT_MODEL_METHOD,
  ];
  const embedding = methods.some(needsEmbeddings)
    ? await prepareEmbeddings(
        sets.flatMap(({ set }) => setTexts({ name: '', dialogues: 0, ...set })),
        embeddingCacheDir(),
        options.log,
      )
    : null;
  if (embedding && embedding.embed === null) {
    notes.push(
      `embedding model missing, hybrid rows skipped (the 'no model' row is what the CLI falls back to): ${embedding.missing.split('\n')[0]}`,
    );
  }
  const rows: QualityRow[] = [];
  const row = (dataset: string, method: string, baseline: boolean, report: SegmentationReport) =>
    rows.push({ area: 'segmentation', dataset, method, baseline, metrics: metricsOf(report) });
  for (const { dataset, set, dialogues } of sets) {
    const gold = set.labels.filter((label) => label.goldBoundary).length - dialogues;
    notes.push(
      `${dataset}: ${dialogues} dialogues, ${set.labels.length} prompts, ${gold} gold boundaries`,
    );
    row(dataset, 'baseline: never split', true, (await scoreSet(set, neverSplit())).report);
    row(dataset, 'baseline: always split', true, (await scoreSet(set, alwaysSplit())).report);
    for (const method of methods) {
      const embed = embedding?.embed ?? undefined;
      if (needsEmbeddings(method) && !embed) continue;
      const scored = await scoreSet(
        set,
        cliSegmenter(method, needsEmbeddings(method) ? embed : undefined),
      );
      row(dataset, method.label, false, scored.report);
      if (method === DEFAULT_METHOD && dataset === 'tiage/dev') {
        notes.push(
          `default on ${dataset}: ${((set.labels.length / scored.elapsedMs) * 1000).toFixed(0)} prompts/s with cached embeddings`,
        );
      }
    }
  }
  if (embedding?.embed && embedding.filled && embedding.filled.texts > 0) {
    const { texts, ms } = embedding.filled;
    notes.push(
      `embedded ${texts} new texts in ${(ms / 1000).toFixed(1)} s (${((texts / ms) * 1000).toFixed(0)}/s, MiniLM)`,
    );
  }
  notes.push(
    'hybrid = hybrid mode with its pre-#23 settings (whole-episode mean, weight 0.5, threshold 0.3, ' +
      '4 keywords); hybrid blend = cosine to the mean of the last ' +
      `${DEFAULT_SEGMENTER_SETTINGS.hybridWindow} prompts weighted ${DEFAULT_SEGMENTER_SETTINGS.hybridEmbeddingWeight} with Jaccard, ` +
      `threshold ${DEFAULT_SEGMENTER_SETTINGS.hybridThreshold}, ${DEFAULT_SEGMENTER_SETTINGS.hybridMinIntentKeywords} keywords; ` +
      `engram default = \`engram segment\` without flags (hybrid, rule ${DEFAULT_SEGMENTER_SETTINGS.hybridRule}: ` +
      'logistic regression of learned-boundary.ts, refit with segmentation.js --fit --select f1); all online',
  );
  for (const dataset of ['tiage/dev', 'sgd/domain', 'sgd/intent']) {
    const of = (method: string) =>
      rows.find((r) => r.dataset === dataset && r.method.startsWith(method))?.metrics;
    const never = of('baseline: never split');
    const engram = of(DEFAULT_METHOD.label);
    if (!never || !engram) continue;
    notes.push(
      `target on ${dataset}: Pk ${engram.Pk.toFixed(3)} ${engram.Pk < never.Pk ? '<' : '≥'} never ${never.Pk.toFixed(3)} ` +
        `(${engram.Pk < never.Pk ? 'met' : 'NOT met'}), F1 ${engram.F1.toFixed(3)} ${engram.F1 >= 0.5 ? '≥ 0.50 (met)' : '< 0.50 (NOT met)'}`,
    );
  }
  notes.push(
    `sgd/* are the held-out files ${SGD_DEV_FILES.join(', ')}; sgd-tune/* the tuning files ${SGD_TUNING_FILES.join(', ')}; tiage/train is for tuning, tiage/dev is reported`,
  );
  return { area: 'segmentation', rows, notes };
};

// ---------------------------------------------------------------------------------------------
// Tuning sweeps: `--sweep FILE` scores each listed configuration on the tuning sets only.

async function sweep(
  file: string,
  datasetsDir: string,
  quick: boolean,
  dev: boolean,
): Promise<void> {
  const methods = JSON.parse(readFileSync(file, 'utf8')) as SegmenterMethod[];
  const sets = loadSets(datasetsDir, { quick, tuning: !dev, dev });
  if (process.argv.includes('--synthetic')) sets.push(syntheticSet(quick));
  const embedding = await prepareEmbeddings(
    sets.flatMap(({ set }) => setTexts({ name: '', dialogues: 0, ...set })),
    embeddingCacheDir(),
    (line) => process.stderr.write(`${line}\n`),
  );
  const fmt = (n: number): string => n.toFixed(3);
  for (const method of methods) {
    const cells: string[] = [];
    let pkGain = 0;
    let f1 = 0;
    for (const { set } of sets) {
      const never = (await scoreSet(set, neverSplit())).report.overall;
      const { report } = await scoreSet(set, cliSegmenter(method, embedding.embed ?? undefined));
      const m = metricsOf(report);
      pkGain += never.pk - m.Pk;
      f1 += m.F1;
      cells.push(
        `${fmt(m.Pk)}/${fmt(never.pk)} ${fmt(m.WindowDiff)} ${fmt(m.P)} ${fmt(m.R)} ${fmt(m.F1)}`,
      );
    }
    process.stdout.write(
      `${method.label.padEnd(40)} ΔPk ${fmt(pkGain / sets.length)} F1 ${fmt(f1 / sets.length)} | ${cells.join(' | ')}\n`,
    );
  }
  process.stdout.write(`sets: ${sets.map((s) => s.dataset).join(', ')} (Pk/never WD P R F1)\n`);
}

// ---------------------------------------------------------------------------------------------
// `--fit [--columns 0,1,2] [--lambda L]`: refits the learned boundary rule on the tuning sets
// and the synthetic sessions (learned-fit.ts) and prints the model and train/dev replay scores.

async function fit(datasetsDir: string, args: readonly string[]): Promise<void> {
  const train = [
    ...loadSets(datasetsDir, { quick: false, tuning: true, dev: false }),
    syntheticSet(false),
  ];
  const dev = loadSets(datasetsDir, { quick: false, tuning: false, dev: true });
  const all = [...train, ...dev];
  const texts = all.flatMap(({ set }) => setTexts({ name: '', dialogues: 0, ...set }));
  const embedding = await prepareEmbeddings(texts, embeddingCacheDir(), (line) =>
    process.stderr.write(`${line}\n`),
  );
  if (!embedding.embed) throw new Error(`--fit needs the embedding model: ${embedding.missing}`);
  const unique = [...new Set(texts)];
  const vectors = await embedding.embed(unique);
  const byText = new Map(unique.map((text, i) => [text, vectors[i]]));
  const fitSets = (sets: NamedSet[]) =>
    sets.map(({ dataset, set }) => fitSetOf(dataset, set.prompts, set.labels, byText));
  const trainSets = fitSets(train);
  const devSets = fitSets(dev);
  const option = (name: string): string | undefined => {
    const at = args.indexOf(name);
    return at >= 0 ? args[at + 1] : undefined;
  };
  const columns = (option('--columns') ?? LEARNED_BOUNDARY_FEATURES.map((_, i) => i).join(','))
    .split(',')
    .map(Number);
  const lambda = Number(option('--lambda') ?? '0.01');
  const rounds = Number(option('--rounds') ?? '2');
  const started = performance.now();
  const select = option('--select') === 'f1' ? 'f1' : 'pk';
  const result = fitLearnedBoundary(trainSets, columns, { lambda, rounds, select });
  const names = [...LEARNED_BOUNDARY_FEATURES, ...EXTRA_FEATURES];
  process.stdout.write(
    `fitted in ${((performance.now() - started) / 1000).toFixed(1)} s, lambda ${lambda}, rounds ${rounds}, ` +
      `threshold ${result.model.threshold}, mean train Pk ${result.trainPk.toFixed(3)}\n` +
      `bias ${result.model.bias.toFixed(4)}\n` +
      columns.map((c) => `  ${names[c]} ${result.allWeights[c].toFixed(4)}`).join('\n') +
      '\n',
  );
  const decide = learnedDecider(result.model.bias, result.allWeights, result.model.threshold);
  const fmt = (n: number): string => n.toFixed(3);
  for (const set of [...trainSets, ...devSets]) {
    const never = fitScoreSet(set, null);
    const m = fitScoreSet(set, decide);
    process.stdout.write(
      `${set.name.padEnd(18)} never ${fmt(never.pk)} | learned Pk ${fmt(m.pk)} WD ${fmt(m.windowDiff)} ` +
        `P ${fmt(m.boundaries.precision)} R ${fmt(m.boundaries.recall)} F1 ${fmt(m.boundaries.f1)}\n`,
    );
  }
  if (columns.every((c) => c < LEARNED_BOUNDARY_FEATURES.length)) {
    process.stdout.write(`model: ${JSON.stringify(result.model)}\n`);
  }
}

if (require.main === module) {
  const args = process.argv.slice(2);
  const at = args.indexOf('--sweep');
  const datasetsDir = process.env.ENGRAM_DATASETS ?? join(repoRootOf(), '..', 'shared', 'datasets');
  const run = args.includes('--fit')
    ? fit(datasetsDir, args)
    : at >= 0
      ? sweep(args[at + 1], datasetsDir, args.includes('--quick'), args.includes('--dev'))
      : runSegmentationQuality({
          datasetsDir,
          workDir: '/tmp',
          quick: args.includes('--quick'),
          log: (line) => process.stderr.write(`${line}\n`),
        }).then((section) => {
          for (const r of section.rows) {
            const m = r.metrics;
            process.stdout.write(
              `${r.dataset.padEnd(18)} ${r.method.padEnd(28)} ${['Pk', 'WindowDiff', 'P', 'R', 'F1'].map((k) => m[k].toFixed(3)).join('  ')}\n`,
            );
          }
          for (const note of section.notes) process.stdout.write(`${note}\n`);
        });
  run.catch((error: unknown) => {
    process.stderr.write(
      `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exitCode = 1;
  });
}
