import { errorMessage } from '@engram/core';
import { errorBodyMessage } from './chat-wire';
import { LlmServiceError } from './llm-errors';

// Small readers of an HTTP exchange, shaped like the embedder's (openai-compatible-embedder.ts),
// which keeps its own private copies; both could share this module.

const BODY_EXCERPT_CHARS = 500;

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new LlmServiceError(
      `chat service reply is not JSON: ${text.slice(0, BODY_EXCERPT_CHARS)}`,
    );
  }
}

export function statusProblem(response: Response, body: string): string {
  return `HTTP ${response.status} ${response.statusText}: ${errorBodyMessage(body).slice(0, BODY_EXCERPT_CHARS)}`;
}

/** `Retry-After` in seconds (the form rate limiters send); dates and junk are ignored. */
export function retryAfterMs(response: Response): number | undefined {
  const seconds = Number(response.headers.get('retry-after') ?? Number.NaN);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : undefined;
}

/** fetch hides the socket error behind "fetch failed"; the cause says what actually happened. */
export function describeFetchError(error: unknown): string {
  const cause = error instanceof Error ? error.cause : undefined;
  return cause === undefined
    ? errorMessage(error)
    : `${errorMessage(error)} (${errorMessage(cause)})`;
}
