/**
 * The shape every quality section returns, so `npm run bench:quality` prints one table with the
 * baselines beside Engram's methods (issue #23).
 */
export interface QualityRow {
  /** Which capability: segmentation, recall, files, distill. */
  area: string;
  /** Dataset and split, e.g. `tiage/dev`, `sgd/domain`, `swe-agent`. */
  dataset: string;
  /** The method measured, e.g. `engram default`, `baseline: never split`. */
  method: string;
  /** True for a baseline (printed as such, never a target). */
  baseline: boolean;
  /** Metric name → value (Pk, WindowDiff, P, R, F1, recall@5, recall@10, MRR, …). */
  metrics: Readonly<Record<string, number>>;
}

export interface QualitySection {
  area: string;
  rows: QualityRow[];
  /** Lines printed under the table: data sizes, what was skipped and why. */
  notes: string[];
}

export interface QualityOptions {
  /** `../shared/datasets` unless told otherwise (ENGRAM_DATASETS or --datasets). */
  datasetsDir: string;
  /** Scratch space for data dirs and caches of this run. */
  workDir: string;
  /** Quick run for the unit tier: small slices of every dataset. */
  quick: boolean;
  log: (line: string) => void;
}

export type QualityRunner = (options: QualityOptions) => Promise<QualitySection>;
