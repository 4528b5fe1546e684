/**
 * Scores a segmenter's decisions against the gold labels: Pk, WindowDiff and exact-boundary
 * precision/recall/F1 over all sessions (libs/core/src/segmentation/metrics.ts), per hard-case
 * category of prompt, and over the sessions that contain each category.
 */
import {
  scoreSegmentation,
  aggregateScores,
  type AggregateScores,
  type SequenceScores,
} from '../../../libs/core/src/segmentation/metrics';
import {
  PROMPT_CATEGORIES,
  categoryExpectsBoundary,
  type Decision,
  type GoldLabel,
  type PromptCategory,
} from './types';

/** How a segmenter did on the prompts of one hard-case category. */
export interface CategoryScore {
  category: PromptCategory;
  /** The gold label of every prompt of this category. */
  expectsBoundary: boolean;
  prompts: number;
  /** How many of them the segmenter marked as boundaries. */
  predictedBoundaries: number;
  /**
   * Share labelled like the gold: for a `*-boundary` category the recall on those prompts, for
   * the others 1 − the share wrongly split. NaN when the category has no prompt.
   */
  accuracy: number;
}

/** Metrics over the sessions that contain at least one prompt of a category. */
export interface SessionGroupScore {
  category: PromptCategory;
  scores: AggregateScores;
}

export interface SegmentationReport {
  sessions: number;
  prompts: number;
  /** Gold boundaries, not counting each session's first prompt. */
  goldBoundaries: number;
  /** Predicted boundaries, not counting each session's first prompt. */
  predictedBoundaries: number;
  overall: AggregateScores;
  byCategory: CategoryScore[];
  bySessionCategory: SessionGroupScore[];
}

export interface EvaluateOptions {
  /** A fixed window width for Pk / WindowDiff; default: per session, half its mean segment. */
  k?: number;
}

interface SessionRows {
  sessionId: string;
  labels: GoldLabel[];
  decisions: Decision[];
}

/**
 * Matches decisions to gold labels by eventId (order does not matter) and scores them. Throws if
 * a labelled prompt has no decision, a decision names an unknown or duplicate event, or its
 * sessionId/promptId disagree with the label.
 */
export function evaluateSegmentation(
  goldLabels: readonly GoldLabel[],
  decisions: readonly Decision[],
  options: EvaluateOptions = {},
): SegmentationReport {
  const sessions = alignSessions(goldLabels, decisions);
  const sequenceScores = new Map<string, SequenceScores>();
  const categoryCounts = new Map<
    PromptCategory,
    { prompts: number; predicted: number; right: number }
  >();
  const sessionsWithCategory = new Map<PromptCategory, Set<string>>();
  let goldBoundaries = 0;
  let predictedBoundaries = 0;
  for (const session of sessions) {
    const reference = session.labels.map((label) => label.goldBoundary);
    const hypothesis = session.decisions.map((decision) => decision.boundary);
    sequenceScores.set(
      session.sessionId,
      options.k === undefined
        ? scoreSegmentation(reference, hypothesis)
        : scoreSegmentation(reference, hypothesis, options.k),
    );
    session.labels.forEach((label, index) => {
      if (index > 0) {
        if (label.goldBoundary) goldBoundaries++;
        if (hypothesis[index]) predictedBoundaries++;
      }
      for (const category of label.categories ?? []) {
        const counts = categoryCounts.get(category) ?? { prompts: 0, predicted: 0, right: 0 };
        counts.prompts++;
        if (hypothesis[index]) counts.predicted++;
        if (hypothesis[index] === label.goldBoundary) counts.right++;
        categoryCounts.set(category, counts);
        const group = sessionsWithCategory.get(category) ?? new Set<string>();
        group.add(session.sessionId);
        sessionsWithCategory.set(category, group);
      }
    });
  }
  const present = PROMPT_CATEGORIES.filter((category) => categoryCounts.has(category));
  return {
    sessions: sessions.length,
    prompts: goldLabels.length,
    goldBoundaries,
    predictedBoundaries,
    overall: aggregateScores([...sequenceScores.values()]),
    byCategory: present.map((category) => {
      const counts = categoryCounts.get(category)!;
      return {
        category,
        expectsBoundary: categoryExpectsBoundary(category),
        prompts: counts.prompts,
        predictedBoundaries: counts.predicted,
        accuracy: counts.prompts === 0 ? Number.NaN : counts.right / counts.prompts,
      };
    }),
    bySessionCategory: present.map((category) => ({
      category,
      scores: aggregateScores(
        [...sessionsWithCategory.get(category)!].map((id) => sequenceScores.get(id)!),
      ),
    })),
  };
}

function alignSessions(
  goldLabels: readonly GoldLabel[],
  decisions: readonly Decision[],
): SessionRows[] {
  const byEvent = new Map<string, Decision>();
  const problems: string[] = [];
  for (const decision of decisions) {
    if (byEvent.has(decision.eventId)) problems.push(`duplicate decision for ${decision.eventId}`);
    byEvent.set(decision.eventId, decision);
  }
  const sessions = new Map<string, SessionRows>();
  const labelled = new Set<string>();
  for (const label of goldLabels) {
    labelled.add(label.eventId);
    const decision = byEvent.get(label.eventId);
    if (decision === undefined) {
      problems.push(
        `no decision for event ${label.eventId} (session ${label.sessionId}, prompt ${label.promptId})`,
      );
      continue;
    }
    if (decision.sessionId !== label.sessionId || decision.promptId !== label.promptId) {
      problems.push(
        `decision for ${label.eventId} says session ${decision.sessionId} prompt ${decision.promptId}, ` +
          `gold says session ${label.sessionId} prompt ${label.promptId}`,
      );
    }
    if (typeof decision.boundary !== 'boolean') {
      problems.push(`decision for ${label.eventId} has a non-boolean boundary`);
    }
    const session = sessions.get(label.sessionId) ?? {
      sessionId: label.sessionId,
      labels: [],
      decisions: [],
    };
    session.labels.push(label);
    session.decisions.push(decision);
    sessions.set(label.sessionId, session);
  }
  for (const eventId of byEvent.keys()) {
    if (!labelled.has(eventId)) problems.push(`decision for unknown event ${eventId}`);
  }
  if (problems.length > 0) {
    const shown = problems.slice(0, 5).join('\n  ');
    const more = problems.length > 5 ? `\n  … and ${problems.length - 5} more` : '';
    throw new Error(`decisions do not match the gold labels:\n  ${shown}${more}`);
  }
  // Prompts in promptId order within each session, whatever order the files had.
  return [...sessions.values()].map((session) => {
    const order = session.labels
      .map((label, index) => ({ promptId: label.promptId, index }))
      .sort((a, b) => a.promptId - b.promptId)
      .map(({ index }) => index);
    return {
      sessionId: session.sessionId,
      labels: order.map((index) => session.labels[index]),
      decisions: order.map((index) => session.decisions[index]),
    };
  });
}

// ---------------------------------------------------------------------------------------------
// Formatting

/** Renders rows as a plain-text table; the first row is the header. */
export function textTable(rows: readonly (readonly string[])[]): string {
  const widths = rows[0].map((_, column) =>
    Math.max(...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (row: readonly string[]): string =>
    row
      .map((cell, column) =>
        column === 0 ? cell.padEnd(widths[column]) : cell.padStart(widths[column]),
      )
      .join('  ')
      .trimEnd();
  const rule = widths.map((width) => '-'.repeat(width)).join('  ');
  return [line(rows[0]), rule, ...rows.slice(1).map(line)].join('\n');
}

const fixed = (value: number, digits = 3): string =>
  Number.isNaN(value) ? '-' : value.toFixed(digits);

export interface LabelledReport {
  label: string;
  report: SegmentationReport;
}

/** One row per segmenter: the headline metrics. */
export function formatSummaryTable(results: readonly LabelledReport[]): string {
  const rows: string[][] = [
    ['segmenter', 'Pk', 'WinDiff', 'P', 'R', 'F1', 'TP', 'FP', 'FN', 'splits'],
  ];
  for (const { label, report } of results) {
    const { overall } = report;
    rows.push([
      label,
      fixed(overall.pk),
      fixed(overall.windowDiff),
      fixed(overall.boundaries.precision),
      fixed(overall.boundaries.recall),
      fixed(overall.boundaries.f1),
      String(overall.boundaries.truePositives),
      String(overall.boundaries.falsePositives),
      String(overall.boundaries.falseNegatives),
      String(report.predictedBoundaries),
    ]);
  }
  return textTable(rows);
}

/** One row per hard-case category, one column per segmenter: accuracy on those prompts. */
export function formatCategoryTable(results: readonly LabelledReport[]): string {
  const categories = PROMPT_CATEGORIES.filter((category) =>
    results.some(({ report }) => report.byCategory.some((score) => score.category === category)),
  );
  const rows: string[][] = [['category (gold)', 'n', ...results.map(({ label }) => label)]];
  for (const category of categories) {
    const first = results
      .map(({ report }) => report.byCategory.find((score) => score.category === category))
      .find((score) => score !== undefined);
    rows.push([
      `${category} (${categoryExpectsBoundary(category) ? 'split' : 'keep'})`,
      String(first?.prompts ?? 0),
      ...results.map(({ report }) => {
        const score = report.byCategory.find((entry) => entry.category === category);
        return score === undefined ? '-' : fixed(score.accuracy);
      }),
    ]);
  }
  return textTable(rows);
}

/** One row per hard-case category, one column per segmenter: F1 / Pk of the sessions holding it. */
export function formatSessionCategoryTable(results: readonly LabelledReport[]): string {
  const categories = PROMPT_CATEGORIES.filter((category) =>
    results.some(({ report }) =>
      report.bySessionCategory.some((group) => group.category === category),
    ),
  );
  const rows: string[][] = [
    ['sessions with …', 'sessions', ...results.map(({ label }) => `${label} F1/Pk`)],
  ];
  for (const category of categories) {
    const first = results
      .map(({ report }) => report.bySessionCategory.find((group) => group.category === category))
      .find((group) => group !== undefined);
    rows.push([
      category,
      String(first?.scores.sequences ?? 0),
      ...results.map(({ report }) => {
        const group = report.bySessionCategory.find((entry) => entry.category === category);
        return group === undefined
          ? '-'
          : `${fixed(group.scores.boundaries.f1, 2)}/${fixed(group.scores.pk, 2)}`;
      }),
    ]);
  }
  return textTable(rows);
}

/** The full text report of one or more segmenters. */
export function formatSegmentationReport(
  results: readonly LabelledReport[],
  title?: string,
): string {
  if (results.length === 0) return '';
  const { report } = results[0];
  const heading =
    `${title ?? 'Segmentation benchmark'}: ${report.sessions} sessions, ${report.prompts} prompts, ` +
    `${report.goldBoundaries} gold boundaries (session starts excluded)`;
  return [
    heading,
    '',
    formatSummaryTable(results),
    '',
    'Accuracy on hard-case prompts (split: share detected; keep: share not split)',
    formatCategoryTable(results),
  ].join('\n');
}
