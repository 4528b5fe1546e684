import { EngramError } from '@engram/core';

/**
 * The chat service refused a request (a 4xx other than 429) or answered with something that is
 * not a chat completion. Retrying the same request cannot help, so it is not retriable; outages
 * (429, 5xx, timeouts, network errors after every attempt) are DownstreamUnavailableError.
 */
export class LlmServiceError extends EngramError {
  readonly code = 'LLM_SERVICE_ERROR';
  readonly retriable = false;
}

/**
 * The prompt does not fit the token budget (and may not be trimmed, or trimming cannot make it
 * fit). Raised before any request is sent; the same prompt will never fit, so not retriable.
 */
export class LlmTokenBudgetError extends EngramError {
  readonly code = 'LLM_TOKEN_BUDGET_EXCEEDED';
  readonly retriable = false;
}
