/**
 * Trivial segmenters that give the benchmark's numbers a context: whatever the real segmenter
 * scores, it should beat these.
 */
import { Rng } from './rng';
import type { Decision, Segmenter } from './types';

interface PromptLine {
  eventId: string;
  sessionId: string;
  promptId: number;
  timestamp: number;
}

function parse(promptsJsonl: readonly string[]): PromptLine[] {
  return promptsJsonl.map((line) => {
    const { eventId, sessionId, promptId, timestamp } = JSON.parse(line) as PromptLine;
    return { eventId, sessionId, promptId, timestamp: Number(timestamp) };
  });
}

/**
 * Builds a segmenter from a per-prompt rule. `index` is the prompt's position in its session
 * (prompts of a session are taken in input order); a session's first prompt is always a boundary.
 */
export function ruleSegmenter(
  rule: (prompt: PromptLine, index: number, previous: PromptLine | undefined) => boolean,
): Segmenter {
  return (promptsJsonl) => {
    const last = new Map<string, { prompt: PromptLine; index: number }>();
    const decisions: Decision[] = parse(promptsJsonl).map((prompt) => {
      const before = last.get(prompt.sessionId);
      const index = before === undefined ? 0 : before.index + 1;
      last.set(prompt.sessionId, { prompt, index });
      return {
        eventId: prompt.eventId,
        sessionId: prompt.sessionId,
        promptId: prompt.promptId,
        boundary: index === 0 || rule(prompt, index, before?.prompt),
      };
    });
    return Promise.resolve(decisions);
  };
}

/** One episode per session. */
export const neverSplit = (): Segmenter => ruleSegmenter(() => false);

/** Every prompt its own episode. */
export const alwaysSplit = (): Segmenter => ruleSegmenter(() => true);

/** A boundary every `n` prompts. */
export const splitEvery = (n: number): Segmenter => ruleSegmenter((_, index) => index % n === 0);

/** A boundary whenever the gap since the previous prompt exceeds `minutes` (thread inactivity). */
export const splitOnGap = (minutes = 30): Segmenter =>
  ruleSegmenter(
    (prompt, _, previous) =>
      previous !== undefined && prompt.timestamp - previous.timestamp > minutes * 60_000,
  );

/** A boundary with probability `p`, seeded (p = the gold boundary rate makes a fair coin). */
export const randomSplit = (p: number, seed: string | number = 1): Segmenter => {
  return (promptsJsonl) => {
    const rng = new Rng(`random-baseline:${seed}`);
    return ruleSegmenter(() => rng.chance(p))(promptsJsonl);
  };
};

export interface NamedSegmenter {
  label: string;
  segment: Segmenter;
}

/**
 * The standard baseline set. `meanSegmentLength` (gold prompts per task) sets "split every N";
 * `boundaryRate` (gold boundaries per non-first prompt) sets the random baseline.
 */
export function baselineSegmenters(
  meanSegmentLength: number,
  boundaryRate: number,
): NamedSegmenter[] {
  const n = Math.max(2, Math.round(meanSegmentLength));
  return [
    { label: 'never-split', segment: neverSplit() },
    { label: 'always-split', segment: alwaysSplit() },
    { label: `every-${n}`, segment: splitEvery(n) },
    { label: 'gap>30min', segment: splitOnGap(30) },
    { label: `random-p${boundaryRate.toFixed(2)}`, segment: randomSplit(boundaryRate) },
  ];
}
