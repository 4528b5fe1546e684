/**
 * Linear-segmentation metrics for the episode segmenter benchmark (SPEC §4.2).
 *
 * A segmentation of N items (a session's user prompts) is a `boolean[]` of length N where
 * `true` means "this item opens a new segment". Item 0 always opens a segment, whatever its
 * value says; it is never counted as a boundary. A boundary at position i (1 ≤ i < N) sits
 * between item i-1 and item i.
 *
 * - Pk (Beeferman, Berger & Lafferty 1999): slide a window of width k over the items; at each of
 *   the N-k positions ask "are item i and item i+k in the same segment?" in the reference and in
 *   the hypothesis; Pk is the share of positions where the answers differ. 0 is perfect.
 * - WindowDiff (Pevzner & Hearst 2002): the same windows, but a window is an error when the
 *   NUMBER of boundaries inside it differs between reference and hypothesis. 0 is perfect.
 * - Boundary precision / recall / F1 on exact positions (item 0 excluded): a near miss (one item
 *   off) is both a false positive and a false negative here, while Pk and WindowDiff only
 *   penalise the windows that straddle the gap between the two positions.
 *
 * Aggregation over many sessions: counts are summed (micro-averaged P/R/F1) and Pk/WindowDiff
 * errors are summed over all windows, i.e. the per-session values averaged with the number of
 * windows as weight.
 *
 * Pure: no I/O.
 */

/** Exact-position boundary scores. */
export interface BoundaryScores {
  precision: number;
  recall: number;
  f1: number;
  truePositives: number;
  falsePositives: number;
  falseNegatives: number;
}

/** Pk or WindowDiff of one sequence, with the counts needed to aggregate. */
export interface WindowScore {
  /** errors / windows; 0 when there is no window. */
  value: number;
  errors: number;
  /** N - k (0 when the sequence is not longer than k). */
  windows: number;
  /** The window width used. */
  k: number;
}

/** Every metric of one sequence (one session). */
export interface SequenceScores {
  items: number;
  referenceSegments: number;
  hypothesisSegments: number;
  pk: WindowScore;
  windowDiff: WindowScore;
  boundaries: BoundaryScores;
}

/** Every metric over many sequences. */
export interface AggregateScores {
  sequences: number;
  items: number;
  referenceSegments: number;
  hypothesisSegments: number;
  /** Summed errors / summed windows (window-weighted mean of the per-sequence Pk). */
  pk: number;
  /** Summed errors / summed windows (window-weighted mean of the per-sequence WindowDiff). */
  windowDiff: number;
  pkErrors: number;
  windowDiffErrors: number;
  windows: number;
  /** Micro-averaged: precision/recall/F1 of the summed counts. */
  boundaries: BoundaryScores;
}

export interface SegmentationPair {
  reference: readonly boolean[];
  hypothesis: readonly boolean[];
}

function checkPair(reference: readonly boolean[], hypothesis: readonly boolean[]): void {
  if (reference.length !== hypothesis.length) {
    throw new RangeError(
      `reference has ${reference.length} items but hypothesis has ${hypothesis.length}`,
    );
  }
}

function checkK(k: number): void {
  if (!Number.isInteger(k) || k < 1) {
    throw new RangeError(`window width k must be a positive integer, got ${k}`);
  }
}

/** True at i (1 ≤ i < N) when item i opens a segment; item 0 is always a start. */
function isBoundary(segmentation: readonly boolean[], i: number): boolean {
  return i > 0 && segmentation[i] === true;
}

/** Number of segments: 1 for the start plus one per boundary (0 for an empty sequence). */
export function segmentCount(segmentation: readonly boolean[]): number {
  if (segmentation.length === 0) return 0;
  let count = 1;
  for (let i = 1; i < segmentation.length; i++) if (segmentation[i]) count++;
  return count;
}

/**
 * The customary window width: half the mean reference segment length, rounded, at least 1.
 * (Mean segment length = items / segments.)
 */
export function defaultWindowSize(reference: readonly boolean[]): number {
  const segments = segmentCount(reference);
  if (segments === 0) return 1;
  return Math.max(1, Math.round(reference.length / segments / 2));
}

/** Prefix sums of boundaries: prefix[i] = number of boundaries at positions 1..i. */
function boundaryPrefix(segmentation: readonly boolean[]): number[] {
  const prefix = new Array<number>(segmentation.length).fill(0);
  for (let i = 1; i < segmentation.length; i++) {
    prefix[i] = prefix[i - 1] + (isBoundary(segmentation, i) ? 1 : 0);
  }
  return prefix;
}

/** Windows i = 0 … N-k-1; `errs(count in ref, count in hyp)` decides an error. */
function windowScore(
  reference: readonly boolean[],
  hypothesis: readonly boolean[],
  k: number,
  isError: (referenceCount: number, hypothesisCount: number) => boolean,
): WindowScore {
  checkPair(reference, hypothesis);
  checkK(k);
  const windows = Math.max(0, reference.length - k);
  if (windows === 0) return { value: 0, errors: 0, windows: 0, k };
  const ref = boundaryPrefix(reference);
  const hyp = boundaryPrefix(hypothesis);
  let errors = 0;
  for (let i = 0; i < windows; i++) {
    // Boundaries strictly after item i and up to item i+k: positions i+1 … i+k.
    if (isError(ref[i + k] - ref[i], hyp[i + k] - hyp[i])) errors++;
  }
  return { value: errors / windows, errors, windows, k };
}

/**
 * Pk: probability that two items k apart are wrongly judged to be in the same / different
 * segments. `k` defaults to {@link defaultWindowSize} of the reference.
 */
export function pk(
  reference: readonly boolean[],
  hypothesis: readonly boolean[],
  k: number = defaultWindowSize(reference),
): WindowScore {
  return windowScore(reference, hypothesis, k, (r, h) => r > 0 !== h > 0);
}

/**
 * WindowDiff: share of windows of width k whose boundary count differs between reference and
 * hypothesis. `k` defaults to {@link defaultWindowSize} of the reference.
 */
export function windowDiff(
  reference: readonly boolean[],
  hypothesis: readonly boolean[],
  k: number = defaultWindowSize(reference),
): WindowScore {
  return windowScore(reference, hypothesis, k, (r, h) => r !== h);
}

/**
 * Precision, recall and F1 from counts. With an empty denominator the score is 1 when the other
 * side has no error either (nothing to find and nothing claimed is perfect) and 0 otherwise.
 */
export function boundaryScoresFromCounts(
  truePositives: number,
  falsePositives: number,
  falseNegatives: number,
): BoundaryScores {
  const claimed = truePositives + falsePositives;
  const actual = truePositives + falseNegatives;
  const precision = claimed === 0 ? (falseNegatives === 0 ? 1 : 0) : truePositives / claimed;
  const recall = actual === 0 ? (falsePositives === 0 ? 1 : 0) : truePositives / actual;
  const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
  return { precision, recall, f1, truePositives, falsePositives, falseNegatives };
}

/** Exact-position boundary precision / recall / F1 (item 0 excluded). */
export function boundaryScores(
  reference: readonly boolean[],
  hypothesis: readonly boolean[],
): BoundaryScores {
  checkPair(reference, hypothesis);
  let truePositives = 0;
  let falsePositives = 0;
  let falseNegatives = 0;
  for (let i = 1; i < reference.length; i++) {
    const ref = isBoundary(reference, i);
    const hyp = isBoundary(hypothesis, i);
    if (ref && hyp) truePositives++;
    else if (hyp) falsePositives++;
    else if (ref) falseNegatives++;
  }
  return boundaryScoresFromCounts(truePositives, falsePositives, falseNegatives);
}

/** Every metric of one sequence; `k` (both window metrics) defaults per sequence. */
export function scoreSegmentation(
  reference: readonly boolean[],
  hypothesis: readonly boolean[],
  k: number = defaultWindowSize(reference),
): SequenceScores {
  checkPair(reference, hypothesis);
  return {
    items: reference.length,
    referenceSegments: segmentCount(reference),
    hypothesisSegments: segmentCount(hypothesis),
    pk: pk(reference, hypothesis, k),
    windowDiff: windowDiff(reference, hypothesis, k),
    boundaries: boundaryScores(reference, hypothesis),
  };
}

/** Sums per-sequence scores: window-weighted Pk/WindowDiff, micro-averaged P/R/F1. */
export function aggregateScores(scores: readonly SequenceScores[]): AggregateScores {
  let items = 0;
  let referenceSegments = 0;
  let hypothesisSegments = 0;
  let pkErrors = 0;
  let windowDiffErrors = 0;
  let pkWindows = 0;
  let windowDiffWindows = 0;
  let truePositives = 0;
  let falsePositives = 0;
  let falseNegatives = 0;
  for (const score of scores) {
    items += score.items;
    referenceSegments += score.referenceSegments;
    hypothesisSegments += score.hypothesisSegments;
    pkErrors += score.pk.errors;
    pkWindows += score.pk.windows;
    windowDiffErrors += score.windowDiff.errors;
    windowDiffWindows += score.windowDiff.windows;
    truePositives += score.boundaries.truePositives;
    falsePositives += score.boundaries.falsePositives;
    falseNegatives += score.boundaries.falseNegatives;
  }
  return {
    sequences: scores.length,
    items,
    referenceSegments,
    hypothesisSegments,
    pk: pkWindows === 0 ? 0 : pkErrors / pkWindows,
    windowDiff: windowDiffWindows === 0 ? 0 : windowDiffErrors / windowDiffWindows,
    pkErrors,
    windowDiffErrors,
    // Both metrics share k per sequence, so their window counts are equal.
    windows: pkWindows,
    boundaries: boundaryScoresFromCounts(truePositives, falsePositives, falseNegatives),
  };
}

/**
 * Scores many sequences and aggregates them. With `k` given, every sequence uses it; otherwise
 * each sequence uses its own default (half its mean reference segment length).
 */
export function scoreSegmentations(
  pairs: readonly SegmentationPair[],
  k?: number,
): AggregateScores {
  return aggregateScores(
    pairs.map(({ reference, hypothesis }) =>
      k === undefined
        ? scoreSegmentation(reference, hypothesis)
        : scoreSegmentation(reference, hypothesis, k),
    ),
  );
}
