import { DEFAULT_CROSS_THREAD_OPTIONS } from './cross-thread';
import type { LinkDecisionRecord } from './cross-thread-decision';

// --- Tuning (seed 004 §2.4 "Tuning Process") -------------------------------------------------

export interface LinkConfusion {
  truePositives: number;
  falsePositives: number;
  trueNegatives: number;
  falseNegatives: number;
  /** FP / (FP + TN): unrelated threads that were linked; null without unrelated pairs. */
  falsePositiveRate: number | null;
  /** FN / (FN + TP): related threads that were not linked; null without related pairs. */
  falseNegativeRate: number | null;
  /** (TP + TN) / all; null without outcomes. */
  accuracy: number | null;
}

export interface LinkTuningOptions {
  /** The threshold in force; defaults to that of the latest record, else 0.7. */
  currentThreshold: number;
  /** Grid step of the threshold sweep over [0, 1]. */
  step: number;
  falsePositiveCost: number;
  falseNegativeCost: number;
  /** Fewer outcomes than this: the proposal is reported but `enoughData` is false. */
  minOutcomes: number;
}

export interface LinkTuningReport {
  decisions: number;
  withOutcome: number;
  /** Among decisions with outcomes: the pairs that really were one conversation. */
  related: number;
  unrelated: number;
  currentThreshold: number;
  proposedThreshold: number;
  /** The algorithmic verdict (score > threshold) at the current threshold. */
  current: LinkConfusion;
  /** The algorithmic verdict at the proposed threshold. */
  proposed: LinkConfusion;
  /** The decisions actually taken (with the LLM). */
  finalDecisions: LinkConfusion;
  /** Where algorithm and LLM disagreed: who was right (seed 004 tuning step 1). */
  disagreements: { total: number; algorithmicCorrect: number; llmCorrect: number };
  enoughData: boolean;
}

export const DEFAULT_LINK_TUNING_OPTIONS: Readonly<Omit<LinkTuningOptions, 'currentThreshold'>> =
  Object.freeze({ step: 0.01, falsePositiveCost: 1, falseNegativeCost: 1, minOutcomes: 20 });

/**
 * False-positive / false-negative rates of the decisions with an outcome, and a proposed
 * threshold. Ground truth: LINK + CORRECT and NO_LINK + INCORRECT are related pairs; LINK +
 * INCORRECT and NO_LINK + CORRECT are not. The proposal sweeps thresholds t = 0, step, 2·step, …,
 * 1 over the recorded algorithmic scores (LINK iff score > t) and takes the one with the least
 * cost (falsePositiveCost · FP + falseNegativeCost · FN); ties go to the threshold closest to the
 * current one, then to the higher. Without outcomes the current threshold is proposed.
 */
export function tuningReport(
  records: readonly LinkDecisionRecord[],
  options: Partial<LinkTuningOptions> = {},
): LinkTuningReport {
  const settings = { ...DEFAULT_LINK_TUNING_OPTIONS, ...options };
  const latest = [...records].sort((a, b) => b.decidedAt - a.decidedAt)[0];
  const currentThreshold =
    options.currentThreshold ??
    latest?.algorithmic.threshold ??
    DEFAULT_CROSS_THREAD_OPTIONS.threshold;
  const judged = records
    .filter((record) => record.outcome !== null)
    .map((record) => ({ record, related: isRelated(record) }));

  const at = (threshold: number): LinkConfusion =>
    confusion(judged.map(({ record, related }) => [record.algorithmic.score > threshold, related]));
  const cost = (matrix: LinkConfusion): number =>
    settings.falsePositiveCost * matrix.falsePositives +
    settings.falseNegativeCost * matrix.falseNegatives;

  let proposedThreshold = currentThreshold;
  if (judged.length > 0 && settings.step > 0) {
    const steps = Math.round(1 / settings.step);
    let bestCost = Infinity;
    for (let i = 0; i <= steps; i += 1) {
      const threshold = Math.min(1, Number((i * settings.step).toFixed(6)));
      const thresholdCost = cost(at(threshold));
      const closer =
        Math.abs(threshold - currentThreshold) < Math.abs(proposedThreshold - currentThreshold);
      const asClose =
        Math.abs(threshold - currentThreshold) === Math.abs(proposedThreshold - currentThreshold);
      if (
        thresholdCost < bestCost ||
        (thresholdCost === bestCost && (closer || (asClose && threshold > proposedThreshold)))
      ) {
        bestCost = thresholdCost;
        proposedThreshold = threshold;
      }
    }
  }

  const disagreements = judged.filter(({ record }) => record.agreement === false && record.llm);
  return {
    decisions: records.length,
    withOutcome: judged.length,
    related: judged.filter(({ related }) => related).length,
    unrelated: judged.filter(({ related }) => !related).length,
    currentThreshold,
    proposedThreshold,
    current: at(currentThreshold),
    proposed: at(proposedThreshold),
    finalDecisions: confusion(
      judged.map(({ record, related }) => [record.decision === 'LINK', related]),
    ),
    disagreements: {
      total: disagreements.length,
      algorithmicCorrect: disagreements.filter(
        ({ record, related }) => record.algorithmic.link === related,
      ).length,
      llmCorrect: disagreements.filter(({ record, related }) => record.llm?.related === related)
        .length,
    },
    enoughData: judged.length >= settings.minOutcomes,
  };
}

function isRelated(record: LinkDecisionRecord): boolean {
  return (record.decision === 'LINK') === (record.outcome === 'CORRECT');
}

function confusion(pairs: readonly (readonly [boolean, boolean])[]): LinkConfusion {
  let truePositives = 0;
  let falsePositives = 0;
  let trueNegatives = 0;
  let falseNegatives = 0;
  for (const [linked, related] of pairs) {
    if (linked && related) truePositives += 1;
    else if (linked) falsePositives += 1;
    else if (related) falseNegatives += 1;
    else trueNegatives += 1;
  }
  const ratio = (part: number, whole: number): number | null => (whole === 0 ? null : part / whole);
  return {
    truePositives,
    falsePositives,
    trueNegatives,
    falseNegatives,
    falsePositiveRate: ratio(falsePositives, falsePositives + trueNegatives),
    falseNegativeRate: ratio(falseNegatives, falseNegatives + truePositives),
    accuracy: ratio(truePositives + trueNegatives, pairs.length),
  };
}
