import { errorMessage } from '@engram/core';

// One HTTP exchange with an OpenAI-compatible service, as the embedder
// (openai-compatible-embedder.ts) and the chat client (llm/openai-compatible-chat-client.ts) both
// hold it: options checked, a JSON POST, its reply judged, and fetch errors described.

const BODY_EXCERPT_CHARS = 500;

/** An attempt that failed where another may succeed: overload, an outage, a timeout, a drop. */
export interface TransientFailure {
  ok: false;
  problem: string;
  retryAfterMs?: number;
  cause?: unknown;
}

/** The service on the other end, as its errors name it. */
export interface ServiceDescription {
  /** `embedding service`, `chat service`. */
  name: string;
  url: string;
  /** The service's not retriable error: a refused request or a reply that is not JSON. */
  ServiceError: new (message: string, context?: Record<string, unknown>) => Error;
  /** Context of a refusal beside `url` and `status`. */
  context?: Record<string, unknown>;
  /** What an error body says (default: the body as is). */
  bodyMessage?: (body: string) => string;
}

/**
 * What is wrong with a client's options: the endpoint (an http(s) `baseUrl`, a `model`) and the
 * options that must be positive integers when set. Empty when nothing is.
 */
export function optionProblems(
  options: { baseUrl: string; model: string },
  positiveIntegers: Record<string, number | undefined>,
): string[] {
  const problems: string[] = [];
  if (!/^https?:\/\/[^/]/.test(options.baseUrl)) {
    problems.push(`baseUrl must be an http(s) URL, got "${options.baseUrl}"`);
  }
  if (!options.model) problems.push('model must be set');
  for (const [name, value] of Object.entries(positiveIntegers)) {
    if (value !== undefined && !(Number.isInteger(value) && value > 0)) {
      problems.push(`${name} must be a positive integer, got ${value}`);
    }
  }
  return problems;
}

/** POSTs `body` as JSON, asking for JSON, with the key as a Bearer token when there is one. */
export function postJson(
  url: string,
  body: unknown,
  apiKey: string | undefined,
  signal: AbortSignal,
): Promise<Response> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json',
  };
  if (apiKey) headers.authorization = `Bearer ${apiKey}`;
  return fetch(url, { method: 'POST', headers, body: JSON.stringify(body), signal });
}

/**
 * A reply (status and body text) judged: rate limits and server errors are transient failures
 * (with the server's `Retry-After`); any other failing status means this request is wrong and will
 * stay wrong, and is thrown as the service's error, as is a body that is not JSON; else the body
 * parsed.
 */
export function judgeReply(
  response: Response,
  text: string,
  service: ServiceDescription,
): { ok: true; body: unknown } | TransientFailure {
  if (response.status === 429 || response.status >= 500) {
    return {
      ok: false,
      problem: statusProblem(response, text, service),
      retryAfterMs: retryAfterMs(response),
    };
  }
  if (!response.ok) {
    throw new service.ServiceError(
      `${service.name} ${service.url} refused the request: ${statusProblem(response, text, service)}`,
      { url: service.url, ...service.context, status: response.status },
    );
  }
  return { ok: true, body: parseJson(text, service) };
}

/** fetch hides the socket error behind "fetch failed"; the cause says what actually happened. */
export function describeFetchError(error: unknown): string {
  if (error instanceof Error && error.name === 'TimeoutError') return 'timed out';
  const cause = error instanceof Error ? error.cause : undefined;
  return cause === undefined
    ? errorMessage(error)
    : `${errorMessage(error)} (${errorMessage(cause)})`;
}

function parseJson(text: string, service: ServiceDescription): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new service.ServiceError(
      `${service.name} reply is not JSON: ${text.slice(0, BODY_EXCERPT_CHARS)}`,
    );
  }
}

function statusProblem(response: Response, body: string, service: ServiceDescription): string {
  const message = service.bodyMessage === undefined ? body : service.bodyMessage(body);
  return `HTTP ${response.status} ${response.statusText}: ${message.slice(0, BODY_EXCERPT_CHARS)}`;
}

/** `Retry-After` in seconds (the form rate limiters send); dates and junk are ignored. */
function retryAfterMs(response: Response): number | undefined {
  const seconds = Number(response.headers.get('retry-after') ?? Number.NaN);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : undefined;
}
