/** Shared shapes of the segmentation benchmark. */

/**
 * Hard-case categories of one prompt (a prompt can have several). `*-boundary` categories are
 * prompts that open a new task (the segmenter should split), `*-continuation` and the others
 * are prompts that continue the current task (it should not).
 */
export const PROMPT_CATEGORIES = [
  /** Fewer than 5 words, continues the task ("yes", "ok push", "5,6"). */
  'terse-continuation',
  /** Fewer than 5 words, opens a new task ("bump pandas", "rebase on main"). */
  'terse-boundary',
  /** Continues the task after more than 30 minutes of silence. */
  'long-gap-continuation',
  /** Opens a new task after more than 30 minutes of silence. */
  'long-gap-boundary',
  /** The first prompt after a long break that resumes the task ("ok I'm back, where were we?"). */
  'resume-after-break',
  /** "no, use X instead" — a correction inside the task. */
  'correction',
  /** Restates the task with other words (the module's `alt` phrases), by construction. */
  'paraphrase-continuation',
  /** 5+ words sharing no keyword (generator's own keyword function) with the task so far. */
  'low-overlap-continuation',
  /** Opens a new task in the same module as the previous task. */
  'same-module-boundary',
  /** Opens a task of the same family with the same opening template ("fix the X bug" twice). */
  'sibling-boundary',
  /** Opens a new task although half or more of its keywords occur in the previous task. */
  'shared-vocabulary-boundary',
] as const;
export type PromptCategory = (typeof PROMPT_CATEGORIES)[number];

/** Whether the gold label of a category is a boundary (true) or a continuation (false). */
export function categoryExpectsBoundary(category: PromptCategory): boolean {
  return category.endsWith('-boundary');
}

/** One line of the gold-label file. */
export interface GoldLabel {
  eventId: string;
  sessionId: string;
  promptId: number;
  /** True when this prompt opens a new task (always true for a session's first prompt). */
  goldBoundary: boolean;
  /** Optional annotations (the synthetic generator writes them; hand-made files may not). */
  taskIndex?: number;
  family?: string;
  module?: string;
  categories?: PromptCategory[];
  note?: string;
}

/**
 * A segmenter's decision for one prompt: the fields the evaluator needs from one output line of
 * `engram segment` (SPEC §12), which also carries threadId, episodeId, reason and similarity.
 */
export interface Decision {
  eventId: string;
  sessionId: string;
  promptId: number;
  /** True when this prompt opens a new episode. */
  boundary: boolean;
  threadId?: string;
  episodeId?: string;
  reason?: string | null;
  similarity?: number | null;
}

/**
 * A segmenter under test: receives every PromptSubmitted of the dataset as JSON lines (one
 * string per prompt, sessions contiguous, prompts in order) and returns one decision per prompt.
 */
export type Segmenter = (promptsJsonl: string[]) => Promise<Decision[]>;
