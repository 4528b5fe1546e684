import { describe, expect, it } from 'vitest';
import {
  aggregateScores,
  boundaryScores,
  boundaryScoresFromCounts,
  defaultWindowSize,
  pk,
  scoreSegmentation,
  scoreSegmentations,
  segmentCount,
  windowDiff,
} from './metrics';

/** Boundaries from a string: '|' opens a segment, '.' continues (item 0 is always a start). */
function seg(pattern: string): boolean[] {
  return [...pattern].map((char) => char === '|');
}

// Ten items in two segments of five: boundary at position 5. k = round(5 / 2) = 3, so there are
// N - k = 7 windows; window i spans boundary positions i+1 … i+3.
const REF = seg('|....|....');

describe('segmentCount and defaultWindowSize', () => {
  it('counts the start plus every later boundary', () => {
    expect(segmentCount(REF)).toBe(2);
    expect(segmentCount(seg('||||'))).toBe(4);
    expect(segmentCount([])).toBe(0);
    // item 0 is a start whatever its value
    expect(segmentCount(seg('...|'))).toBe(2);
  });

  it('is half the mean reference segment length, rounded, at least 1', () => {
    expect(defaultWindowSize(REF)).toBe(3); // mean 5 → 2.5 → 3
    expect(defaultWindowSize(seg('|.........'))).toBe(5); // one segment of 10
    expect(defaultWindowSize(seg('|..|...'))).toBe(2); // mean 3.5 → 1.75 → 2
    expect(defaultWindowSize(seg('||||'))).toBe(1); // mean 1 → 0.5 → rounds to 1
    expect(defaultWindowSize(seg('|||||||'))).toBe(1); // mean 1 → at least 1
    expect(defaultWindowSize([])).toBe(1);
  });
});

describe('pk and windowDiff', () => {
  it('are 0 for a perfect hypothesis', () => {
    expect(pk(REF, REF)).toEqual({ value: 0, errors: 0, windows: 7, k: 3 });
    expect(windowDiff(REF, REF)).toEqual({ value: 0, errors: 0, windows: 7, k: 3 });
  });

  it('count the windows straddling a missed boundary (no boundaries at all)', () => {
    // windows i = 2, 3, 4 contain position 5
    const none = seg('|.........');
    expect(pk(REF, none)).toMatchObject({ errors: 3, windows: 7 });
    expect(pk(REF, none).value).toBeCloseTo(3 / 7, 12);
    expect(windowDiff(REF, none).value).toBeCloseTo(3 / 7, 12);
  });

  it('punish boundaries everywhere: Pk only outside the true boundary, WindowDiff everywhere', () => {
    const all = seg('||||||||||');
    // Pk agrees where the reference window holds its boundary (i = 2, 3, 4): 4 errors of 7.
    expect(pk(REF, all).errors).toBe(4);
    // Every window holds 3 hypothesised boundaries but at most 1 reference boundary.
    expect(windowDiff(REF, all)).toMatchObject({ value: 1, errors: 7 });
  });

  it('penalise a near miss only in the windows between the two positions', () => {
    const nearMiss = seg('|.....|...'); // boundary at 6 instead of 5
    // ref windows {2,3,4}, hyp windows {3,4,5}: errors at i = 2 and i = 5
    expect(pk(REF, nearMiss).errors).toBe(2);
    expect(windowDiff(REF, nearMiss).errors).toBe(2);
    expect(pk(REF, nearMiss).value).toBeCloseTo(2 / 7, 12);
    // …and far less than a far miss or exact-position F1, which scores the near miss as 0
    const farMiss = seg('|.......|.'); // boundary at 8: hyp windows {5, 6} (i ≤ 6)
    expect(pk(REF, farMiss).errors).toBe(5);
    expect(boundaryScores(REF, nearMiss).f1).toBe(0);
    expect(pk(REF, nearMiss).value).toBeLessThan(pk(REF, farMiss).value);
  });

  it('differ on an extra boundary inside a window that already has one (Pevzner & Hearst)', () => {
    const extra = seg('|....||...'); // boundaries at 5 and 6
    // Pk: hyp windows {2,3,4,5} vs ref {2,3,4} → only i = 5
    expect(pk(REF, extra).errors).toBe(1);
    // WindowDiff: i = 3, 4 hold 2 vs 1 boundaries, i = 5 holds 1 vs 0
    expect(windowDiff(REF, extra).errors).toBe(3);
  });

  it('take an explicit k and report no window when the sequence is not longer than k', () => {
    expect(pk(REF, seg('|.........'), 1)).toMatchObject({ errors: 1, windows: 9, k: 1 });
    expect(windowDiff(REF, seg('|.........'), 10)).toEqual({
      value: 0,
      errors: 0,
      windows: 0,
      k: 10,
    });
    expect(pk([true], [true])).toEqual({ value: 0, errors: 0, windows: 0, k: 1 });
  });

  it('ignore the value given for item 0', () => {
    expect(pk(seg('.....|....'), REF).errors).toBe(0);
    expect(windowDiff(REF, seg('.....|....')).errors).toBe(0);
  });

  it('reject mismatched lengths and bad window widths', () => {
    expect(() => pk(REF, seg('|...'))).toThrow(RangeError);
    expect(() => windowDiff(REF, REF, 0)).toThrow(RangeError);
    expect(() => pk(REF, REF, 1.5)).toThrow(RangeError);
  });
});

describe('boundaryScores', () => {
  it('is perfect for a perfect hypothesis and excludes item 0', () => {
    expect(boundaryScores(REF, REF)).toEqual({
      precision: 1,
      recall: 1,
      f1: 1,
      truePositives: 1,
      falsePositives: 0,
      falseNegatives: 0,
    });
  });

  it('scores "always split" and "never split"', () => {
    const all = boundaryScores(REF, seg('||||||||||'));
    expect(all).toMatchObject({ truePositives: 1, falsePositives: 8, falseNegatives: 0 });
    expect(all.precision).toBeCloseTo(1 / 9, 12);
    expect(all.recall).toBe(1);
    expect(all.f1).toBeCloseTo(0.2, 12); // 2·(1/9)·1 / (10/9)
    expect(boundaryScores(REF, seg('|.........'))).toEqual({
      precision: 0,
      recall: 0,
      f1: 0,
      truePositives: 0,
      falsePositives: 0,
      falseNegatives: 1,
    });
  });

  it('counts hand-computed mixtures', () => {
    // ref boundaries {3, 6, 8}, hyp {3, 5, 8, 9}: TP {3, 8}, FP {5, 9}, FN {6}
    const scores = boundaryScores(seg('|..|..|.|.'), seg('|..|.|..||'));
    expect(scores).toMatchObject({ truePositives: 2, falsePositives: 2, falseNegatives: 1 });
    expect(scores.precision).toBe(0.5);
    expect(scores.recall).toBeCloseTo(2 / 3, 12);
    expect(scores.f1).toBeCloseTo(4 / 7, 12); // 2·0.5·(2/3) / (0.5 + 2/3)
  });

  it('treats an empty side as perfect only when nothing was missed or claimed', () => {
    expect(boundaryScoresFromCounts(0, 0, 0)).toMatchObject({ precision: 1, recall: 1, f1: 1 });
    expect(boundaryScoresFromCounts(0, 2, 0)).toMatchObject({ precision: 0, recall: 0, f1: 0 });
    expect(boundaryScoresFromCounts(0, 0, 2)).toMatchObject({ precision: 0, recall: 0, f1: 0 });
  });
});

describe('aggregation', () => {
  const nearMiss = { reference: REF, hypothesis: seg('|.....|...') };
  // 4 items, segments of 2 → k = 1, 3 windows, perfect hypothesis
  const perfectShort = { reference: seg('|.|.'), hypothesis: seg('|.|.') };

  it('weights Pk and WindowDiff by the number of windows', () => {
    const aggregate = scoreSegmentations([nearMiss, perfectShort]);
    expect(aggregate).toMatchObject({
      sequences: 2,
      items: 14,
      referenceSegments: 4,
      hypothesisSegments: 4,
      pkErrors: 2,
      windowDiffErrors: 2,
      windows: 10,
    });
    // (2 + 0) / (7 + 3), not the unweighted mean (2/7 + 0) / 2
    expect(aggregate.pk).toBeCloseTo(0.2, 12);
    expect(aggregate.windowDiff).toBeCloseTo(0.2, 12);
  });

  it('micro-averages precision, recall and F1', () => {
    const aggregate = scoreSegmentations([nearMiss, perfectShort]);
    // TP: 0 + 1, FP: 1 + 0, FN: 1 + 0
    expect(aggregate.boundaries).toEqual({
      precision: 0.5,
      recall: 0.5,
      f1: 0.5,
      truePositives: 1,
      falsePositives: 1,
      falseNegatives: 1,
    });
  });

  it('applies a fixed k to every sequence when given', () => {
    const aggregate = scoreSegmentations([nearMiss, perfectShort], 1);
    // nearMiss with k = 1: windows 9, errors at positions 5 and 6
    expect(aggregate).toMatchObject({ windows: 12, pkErrors: 2, windowDiffErrors: 2 });
  });

  it('is zero-safe for no sequences and single-item sequences', () => {
    expect(aggregateScores([])).toMatchObject({ pk: 0, windowDiff: 0, windows: 0, items: 0 });
    const single = scoreSegmentation([true], [true]);
    expect(aggregateScores([single])).toMatchObject({ pk: 0, windows: 0, items: 1 });
    expect(aggregateScores([single]).boundaries.f1).toBe(1);
  });
});
