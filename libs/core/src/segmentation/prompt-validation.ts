import { InvalidEventError } from '../errors/engram-error';
import type { SegmenterSettings } from './segmenter-settings';

/** The segmenter settings the content checks read (the segmenter's, downstream stages too). */
export type PromptLimits = Pick<SegmenterSettings, 'maxPromptChars'>;

/** What the content checks of a prompt read. */
export interface CheckedPrompt {
  eventId: string;
  sessionId: string;
  promptId: number;
  text: string;
}

/**
 * Why the segmenter rejects a prompt on its own content (oversize text, an impossible promptId),
 * or null when it does not. The segmenter dead-letters such a prompt (checkPromptContent), and
 * the stages downstream of the same topic — the retrieval indexer's turns — skip it with the same
 * rule, so nothing rejected upstream becomes recallable (issue 19). Out-of-order promptIds depend
 * on the session's state and are the segmenter's alone.
 */
export function promptContentProblem(
  prompt: Pick<CheckedPrompt, 'promptId' | 'text'>,
  settings: Pick<SegmenterSettings, 'maxPromptChars'>,
): string | null {
  if (prompt.text.length > settings.maxPromptChars) {
    return `prompt text is ${prompt.text.length} characters, over the limit of ${settings.maxPromptChars}`;
  }
  if (!Number.isSafeInteger(prompt.promptId) || prompt.promptId < 0) {
    return `promptId ${prompt.promptId} is not a non-negative integer`;
  }
  return null;
}

/** promptContentProblem as the segmenter applies it: throws InvalidEventError (→ its DLQ). */
export function checkPromptContent(
  prompt: CheckedPrompt,
  settings: Pick<SegmenterSettings, 'maxPromptChars'>,
): void {
  const problem = promptContentProblem(prompt, settings);
  if (problem !== null) {
    throw new InvalidEventError(problem, {
      eventId: prompt.eventId,
      sessionId: prompt.sessionId,
      promptId: prompt.promptId,
    });
  }
}
