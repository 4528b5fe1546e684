import type { DistillationWindow } from '../../../../libs/core/src/distillation/triggers';

/**
 * One fact a reader of an episode should retain, written by hand. `keys` are the terms that
 * carry it: each key is one term or `|`-separated alternatives, matched case-insensitively as a
 * substring of a memory's content. A memory states the fact when it holds enough of the keys
 * (see `factMatched`).
 */
export interface LabelledFact {
  text: string;
  keys: string[];
}

/** One distillation window (an episode, as the segmenter would close it) with its labels. */
export interface LabelledEpisode {
  /** Which labelled set: `demo`, `graph-monitor`, `synthetic`. */
  dataset: string;
  name: string;
  window: DistillationWindow;
  /** What a reader should retain; empty for an episode of pure noise. */
  facts: LabelledFact[];
}
