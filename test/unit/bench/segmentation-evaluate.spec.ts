import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  alwaysSplit,
  baselineSegmenters,
  neverSplit,
  splitEvery,
  splitOnGap,
} from '../../bench/segmentation/baselines';
import {
  evaluateSegmentation,
  formatSegmentationReport,
  formatSessionCategoryTable,
  textTable,
} from '../../bench/segmentation/evaluate';
import { ensureDataset, readJsonlLines } from '../../bench/segmentation/generate-sessions';
import { commandSegmenter, runSegmentationBenchmark } from '../../bench/segmentation/run';
import type { Decision, GoldLabel, Segmenter } from '../../bench/segmentation/types';

/** Gold labels of one session from a pattern: '|' opens a task, '.' continues it. */
function session(
  id: string,
  pattern: string,
  categories: Record<number, GoldLabel['categories']> = {},
): GoldLabel[] {
  return [...pattern].map((char, index) => ({
    eventId: `${id}-${index}`,
    sessionId: id,
    promptId: index + 1,
    goldBoundary: char === '|',
    ...(categories[index] ? { categories: categories[index] } : {}),
  }));
}

function decide(labels: readonly GoldLabel[], pattern: string): Decision[] {
  return labels.map((label, index) => ({
    eventId: label.eventId,
    sessionId: label.sessionId,
    promptId: label.promptId,
    boundary: pattern[index] === '|',
  }));
}

// Session A: 10 prompts, boundary at 5. Session B: 4 prompts, boundary at 2.
const A = session('a', '|....|....', {
  3: ['terse-continuation'],
  5: ['sibling-boundary'],
  7: ['low-overlap-continuation'],
});
const B = session('b', '|.|.', { 2: ['sibling-boundary'], 3: ['terse-continuation'] });
const GOLD = [...A, ...B];

describe('evaluateSegmentation', () => {
  it('scores a perfect segmenter as perfect', () => {
    const report = evaluateSegmentation(GOLD, [...decide(A, '|....|....'), ...decide(B, '|.|.')]);
    expect(report).toMatchObject({
      sessions: 2,
      prompts: 14,
      goldBoundaries: 2,
      predictedBoundaries: 2,
    });
    expect(report.overall).toMatchObject({ pk: 0, windowDiff: 0 });
    expect(report.overall.boundaries).toMatchObject({ precision: 1, recall: 1, f1: 1 });
    expect(report.byCategory.every((score) => score.accuracy === 1)).toBe(true);
  });

  it('computes the hand-worked numbers of a near miss and a miss', () => {
    // A: boundary one prompt late (k = 3, 7 windows, 2 errors); B: missed (k = 1, 3 windows, 1 error)
    const report = evaluateSegmentation(GOLD, [...decide(A, '|.....|...'), ...decide(B, '|...')]);
    expect(report.overall).toMatchObject({ windows: 10, pkErrors: 3, windowDiffErrors: 3 });
    expect(report.overall.pk).toBeCloseTo(0.3, 12);
    expect(report.overall.boundaries).toMatchObject({
      truePositives: 0,
      falsePositives: 1,
      falseNegatives: 2,
      f1: 0,
    });
    const sibling = report.byCategory.find((score) => score.category === 'sibling-boundary');
    expect(sibling).toEqual({
      category: 'sibling-boundary',
      expectsBoundary: true,
      prompts: 2,
      predictedBoundaries: 0,
      accuracy: 0,
    });
    const terse = report.byCategory.find((score) => score.category === 'terse-continuation');
    expect(terse).toMatchObject({ expectsBoundary: false, prompts: 2, accuracy: 1 });
    const lowOverlapSessions = report.bySessionCategory.find(
      (group) => group.category === 'low-overlap-continuation',
    );
    expect(lowOverlapSessions?.scores).toMatchObject({ sequences: 1, windows: 7, pkErrors: 2 });
  });

  it('counts a false split on a continuation category', () => {
    const report = evaluateSegmentation(GOLD, [...decide(A, '|..||....|'), ...decide(B, '|.||')]);
    const terse = report.byCategory.find((score) => score.category === 'terse-continuation');
    expect(terse).toMatchObject({ prompts: 2, predictedBoundaries: 2, accuracy: 0 });
    // A: splits at 3, 4, 9 (gold 5); B: splits at 2 (gold), 3
    expect(report.overall.boundaries).toMatchObject({
      truePositives: 1,
      falsePositives: 4,
      falseNegatives: 1,
    });
  });

  it('matches decisions by eventId whatever their order', () => {
    const decisions = [...decide(A, '|....|....'), ...decide(B, '|.|.')].reverse();
    expect(evaluateSegmentation(GOLD, decisions).overall.boundaries.f1).toBe(1);
  });

  it('accepts a fixed window width', () => {
    const report = evaluateSegmentation(GOLD, [...decide(A, '|.....|...'), ...decide(B, '|...')], {
      k: 1,
    });
    // A with k = 1: 9 windows, errors at 5 and 6; B: 3 windows, error at 2
    expect(report.overall).toMatchObject({ windows: 12, pkErrors: 3 });
  });

  it('rejects missing, unknown, duplicate and inconsistent decisions', () => {
    const good = [...decide(A, '|....|....'), ...decide(B, '|.|.')];
    expect(() => evaluateSegmentation(GOLD, good.slice(1))).toThrow(/no decision for event a-0/);
    expect(() =>
      evaluateSegmentation(GOLD, [
        ...good,
        { eventId: 'zzz', sessionId: 'a', promptId: 99, boundary: true },
      ]),
    ).toThrow(/unknown event zzz/);
    expect(() => evaluateSegmentation(GOLD, [...good, good[0]])).toThrow(/duplicate decision/);
    expect(() =>
      evaluateSegmentation(GOLD, [{ ...good[0], promptId: 42 }, ...good.slice(1)]),
    ).toThrow(/prompt 42/);
  });
});

describe('formatting', () => {
  it('renders aligned tables with every segmenter and category', () => {
    const perfect = evaluateSegmentation(GOLD, [...decide(A, '|....|....'), ...decide(B, '|.|.')]);
    const never = evaluateSegmentation(GOLD, [...decide(A, '|.........'), ...decide(B, '|...')]);
    const results = [
      { label: 'oracle', report: perfect },
      { label: 'never', report: never },
    ];
    const text = formatSegmentationReport(results, 'Tiny');
    expect(text).toContain('Tiny: 2 sessions, 14 prompts, 2 gold boundaries');
    expect(text).toMatch(/oracle\s+0\.000\s+0\.000\s+1\.000\s+1\.000\s+1\.000/);
    expect(text).toMatch(/sibling-boundary \(split\)\s+2\s+1\.000\s+0\.000/);
    expect(formatSessionCategoryTable(results)).toMatch(/terse-continuation\s+2\s+1\.00\/0\.00/);
    expect(
      textTable([
        ['a', 'bb'],
        ['ccc', 'd'],
      ]),
    ).toBe('a    bb\n---  --\nccc   d');
  });
});

describe('baselines', () => {
  const line = (sessionId: string, promptId: number, minutes: number): string =>
    JSON.stringify({
      eventId: `${sessionId}-${promptId}`,
      sessionId,
      promptId,
      timestamp: minutes * 60_000,
    });
  const input = [
    line('s', 1, 0),
    line('s', 2, 1),
    line('s', 3, 40),
    line('s', 4, 41),
    line('t', 1, 0),
    line('t', 2, 90),
  ];
  const boundaries = async (segment: Segmenter): Promise<boolean[]> =>
    (await segment(input)).map((decision) => decision.boundary);

  it('decide as their names say, each session starting with a boundary', async () => {
    expect(await boundaries(neverSplit())).toEqual([true, false, false, false, true, false]);
    expect(await boundaries(alwaysSplit())).toEqual([true, true, true, true, true, true]);
    expect(await boundaries(splitEvery(2))).toEqual([true, false, true, false, true, false]);
    expect(await boundaries(splitOnGap(30))).toEqual([true, false, true, false, true, true]);
    const labels = baselineSegmenters(5.2, 0.14).map(({ label }) => label);
    expect(labels).toEqual(['never-split', 'always-split', 'every-5', 'gap>30min', 'random-p0.14']);
  });
});

describe('runSegmentationBenchmark', () => {
  const dir = mkdtempSync(join(tmpdir(), 'engram-seg-run-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const options = { seed: 11, sessions: 15, cacheDir: dir };

  it('scores an oracle as perfect and reports the dataset, timing and text', async () => {
    const files = ensureDataset(options);
    const gold = new Map(
      readJsonlLines(files.labelsPath).map((line) => {
        const label = JSON.parse(line) as GoldLabel;
        return [label.eventId, label.goldBoundary] as const;
      }),
    );
    const seedGold = new Map<string, boolean>();
    for (const line of readJsonlLines(
      join(__dirname, '../../bench/segmentation/seed-examples.labels.jsonl'),
    )) {
      const label = JSON.parse(line) as GoldLabel;
      seedGold.set(label.eventId, label.goldBoundary);
    }
    const oracle: Segmenter = (lines) =>
      Promise.resolve(
        lines.map((text) => {
          const { eventId, sessionId, promptId } = JSON.parse(text) as Decision;
          return {
            eventId,
            sessionId,
            promptId,
            boundary: gold.get(eventId) ?? seedGold.get(eventId)!,
          };
        }),
      );
    const result = await runSegmentationBenchmark({ ...options, segment: oracle, label: 'oracle' });
    expect(result.dataset.reused).toBe(true);
    expect(result.dataset.stats.sessions).toBe(15);
    expect(result.report.overall).toMatchObject({ pk: 0, windowDiff: 0 });
    expect(result.report.overall.boundaries.f1).toBe(1);
    expect(result.seedExamples?.overall.boundaries.f1).toBe(1);
    expect(result.timing.prompts).toBe(result.dataset.stats.prompts);
    expect(result.text).toContain('oracle');
  });

  it('runs a command that behaves like engram segment', async () => {
    // Echoes a decision per input line, boundary on every prompt.
    const script =
      "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{for(const l of s.split('\\n')){" +
      'if(!l.trim())continue;const p=JSON.parse(l);console.log(JSON.stringify({eventId:p.eventId,' +
      "sessionId:p.sessionId,promptId:p.promptId,threadId:p.sessionId,episodeId:'x',boundary:true," +
      "reason:'intent_shift',similarity:0}))}})";
    const segment = commandSegmenter(process.execPath, ['-e', script]);
    const result = await runSegmentationBenchmark({
      ...options,
      segment,
      label: 'echo',
      seedExamples: false,
    });
    expect(result.seedExamples).toBeNull();
    expect(result.report.overall.boundaries.recall).toBe(1);
    expect(result.report.predictedBoundaries).toBe(result.dataset.stats.prompts - 15);
  });

  it('fails when the command fails', async () => {
    const segment = commandSegmenter(process.execPath, ['-e', 'process.exit(3)']);
    await expect(
      runSegmentationBenchmark({ ...options, segment, label: 'broken' }),
    ).rejects.toThrow(/exited with 3/);
  });
});
