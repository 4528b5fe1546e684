import type { MemoryType } from '@engram/contracts';
import type { CandidateFacts } from '../candidates';
import type { MemoryText } from './templates';

/** One memory to write, as an LLM synthesiser receives it: the facts and the template's draft. */
export interface SynthesisRequest {
  key: string;
  memoryType: MemoryType;
  facts: CandidateFacts;
  draft: MemoryText;
}

/**
 * An optional LLM behind an interface (SPEC §5: "LLM if configured, deterministic templates
 * otherwise"). One batch per promotion (seed 002 §5: one call per pipeline completion). It may
 * answer null for an item, which keeps the template's text.
 */
export interface Synthesiser {
  synthesise(requests: readonly SynthesisRequest[]): Promise<ReadonlyArray<MemoryText | null>>;
}

export interface SynthesisOutcome {
  texts: MemoryText[];
  /** Per item: whether the synthesiser or the template wrote it. */
  writtenBy: Array<'synthesiser' | 'template'>;
  /** The synthesiser's error, when it failed (all items then keep their templates). */
  error: unknown;
}

/**
 * The texts of the memories to promote. A failing or absent synthesiser falls back to the
 * templates: synthesis improves wording, it never decides whether a memory exists, so an LLM
 * outage must not hold promotion back. The error is returned for the caller to log and count.
 */
export async function synthesiseTexts(
  requests: readonly SynthesisRequest[],
  synthesiser?: Synthesiser,
): Promise<SynthesisOutcome> {
  const drafts = requests.map((request) => request.draft);
  const templates = (error: unknown): SynthesisOutcome => ({
    texts: drafts,
    writtenBy: drafts.map(() => 'template'),
    error,
  });
  if (synthesiser === undefined || requests.length === 0) return templates(null);
  let answers: ReadonlyArray<MemoryText | null>;
  try {
    answers = await synthesiser.synthesise(requests);
  } catch (error) {
    return templates(error);
  }
  const texts = drafts.map((draft, i) => usable(answers[i]) ?? draft);
  return {
    texts,
    writtenBy: drafts.map((_, i) => (usable(answers[i]) === null ? 'template' : 'synthesiser')),
    error: null,
  };
}

function usable(text: MemoryText | null | undefined): MemoryText | null {
  return text && text.content.trim() !== '' ? text : null;
}
