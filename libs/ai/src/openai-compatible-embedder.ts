import {
  backoffDelayMs,
  DownstreamUnavailableError,
  errorMessage,
  l2Normalise,
  MisconfigurationError,
  type BackoffOptions,
} from '@engram/core';
import { setTimeout as sleep } from 'node:timers/promises';
import { chunk } from './batches';
import type { Embedder } from './embedder';
import { EmbeddingServiceError } from './errors';
import { parseEmbeddingsReply, type EmbeddingsRequest } from './openai-wire';

export interface OpenAiCompatibleOptions {
  /** API root without the endpoint, e.g. `http://localhost:11434/v1` (Ollama). */
  baseUrl: string;
  model: string;
  /** Vector length the model returns; checked against every reply (the ES mapping fixes it). */
  dims: number;
  /** Sent as a Bearer token when set. */
  apiKey?: string;
  /** Stored beside every vector (default `openai-compatible:<model>`). */
  id?: string;
  /** Texts per request (default 64). */
  maxBatchSize?: number;
  /** Per attempt (default 30 s). */
  timeoutMs?: number;
  /** Attempts per batch on 429, 5xx, timeouts and network errors (default 5). */
  maxAttempts?: number;
  /** Full-jitter exponential backoff between attempts (default 250 ms up to 8 s). */
  backoff?: BackoffOptions;
}

/** How one HTTP attempt ended: vectors, or a transient failure worth another attempt. */
type Attempt =
  | { ok: true; vectors: number[][] }
  | { ok: false; problem: string; retryAfterMs?: number; cause?: unknown };

interface Settings {
  maxBatchSize: number;
  timeoutMs: number;
  maxAttempts: number;
  backoff: BackoffOptions;
}

const BODY_EXCERPT_CHARS = 500;

/**
 * Embeddings from any server speaking the OpenAI embeddings API (OpenAI, Ollama, vLLM, TEI):
 * batched requests, each retried with backoff on overload and outages.
 */
export class OpenAiCompatibleEmbedder implements Embedder {
  readonly id: string;
  readonly dims: number;
  private readonly url: string;
  private readonly settings: Settings;

  constructor(private readonly options: OpenAiCompatibleOptions) {
    assertOptions(options);
    this.id = options.id ?? `openai-compatible:${options.model}`;
    this.dims = options.dims;
    this.url = `${options.baseUrl.replace(/\/+$/, '')}/embeddings`;
    this.settings = {
      maxBatchSize: options.maxBatchSize ?? 64,
      timeoutMs: options.timeoutMs ?? 30_000,
      maxAttempts: options.maxAttempts ?? 5,
      backoff: options.backoff ?? { initialMs: 250, maxMs: 8_000 },
    };
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    const vectors: Float32Array[] = [];
    for (const batch of chunk(texts, this.settings.maxBatchSize)) {
      const raw = await this.requestWithRetry({ model: this.options.model, input: batch });
      vectors.push(...raw.map((vector) => this.checkedUnitVector(vector)));
    }
    return vectors;
  }

  private async requestWithRetry(request: EmbeddingsRequest): Promise<number[][]> {
    for (let attempt = 0; ; attempt += 1) {
      const outcome = await this.attempt(request);
      if (outcome.ok) return outcome.vectors;
      if (attempt + 1 >= this.settings.maxAttempts) {
        throw new DownstreamUnavailableError(
          `embedding service ${this.url} failed ${attempt + 1} times; last: ${outcome.problem}`,
          { url: this.url, attempts: attempt + 1 },
          { cause: outcome.cause },
        );
      }
      const backoff = backoffDelayMs(attempt, this.settings.backoff);
      await sleep(
        Math.min(this.settings.backoff.maxMs, Math.max(backoff, outcome.retryAfterMs ?? 0)),
      );
    }
  }

  private async attempt(request: EmbeddingsRequest): Promise<Attempt> {
    let response: Response;
    try {
      response = await fetch(this.url, {
        method: 'POST',
        headers: this.headers(),
        body: JSON.stringify(request),
        signal: AbortSignal.timeout(this.settings.timeoutMs),
      });
    } catch (error) {
      return { ok: false, problem: `request failed: ${describeFetchError(error)}`, cause: error };
    }
    return this.readResponse(response, request.input.length);
  }

  private async readResponse(response: Response, inputCount: number): Promise<Attempt> {
    const text = await readBody(response);
    if (text === undefined) {
      return { ok: false, problem: 'connection lost while reading the reply' };
    }
    if (isTransientStatus(response.status)) {
      return {
        ok: false,
        problem: statusProblem(response, text),
        retryAfterMs: retryAfterMs(response),
      };
    }
    if (!response.ok) {
      const problem = statusProblem(response, text);
      throw new EmbeddingServiceError(
        `embedding service ${this.url} refused the request: ${problem}`,
        {
          url: this.url,
          status: response.status,
        },
      );
    }
    return { ok: true, vectors: parseEmbeddingsReply(parseJson(text), inputCount) };
  }

  private headers(): Record<string, string> {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json',
    };
    if (this.options.apiKey) headers.authorization = `Bearer ${this.options.apiKey}`;
    return headers;
  }

  /** A wrong `dims` is a configuration mistake: the stored vectors and the index would not match. */
  private checkedUnitVector(vector: number[]): Float32Array {
    if (vector.length !== this.dims) {
      throw new MisconfigurationError(
        `embedding model ${this.options.model} at ${this.url} returns ${vector.length}-dim vectors ` +
          `but dims is configured as ${this.dims}: set dims to ${vector.length} (and re-embed) or pick a model with ${this.dims}.`,
        {
          model: this.options.model,
          url: this.url,
          configured: this.dims,
          returned: vector.length,
        },
      );
    }
    // OpenAI's vectors are unit length already; Ollama's and TEI's need not be.
    return l2Normalise(vector);
  }
}

function assertOptions(options: OpenAiCompatibleOptions): void {
  const problems: string[] = [];
  if (!/^https?:\/\/[^/]/.test(options.baseUrl)) {
    problems.push(`baseUrl must be an http(s) URL, got "${options.baseUrl}"`);
  }
  if (!options.model) problems.push('model must be set');
  const positive: [string, number | undefined][] = [
    ['dims', options.dims],
    ['maxBatchSize', options.maxBatchSize],
    ['timeoutMs', options.timeoutMs],
    ['maxAttempts', options.maxAttempts],
  ];
  for (const [name, value] of positive) {
    if (value !== undefined && !(Number.isInteger(value) && value > 0)) {
      problems.push(`${name} must be a positive integer, got ${value}`);
    }
  }
  if (problems.length > 0) {
    throw new MisconfigurationError(`OpenAI-compatible embedder: ${problems.join('; ')}`, {
      problems,
    });
  }
}

/** Rate limits and server errors pass; other 4xx mean this request is wrong and will stay wrong. */
function isTransientStatus(status: number): boolean {
  return status === 429 || status >= 500;
}

/** The body, or undefined when the connection dropped mid-reply (a transient failure). */
async function readBody(response: Response): Promise<string | undefined> {
  try {
    return await response.text();
  } catch {
    return undefined;
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new EmbeddingServiceError(
      `embedding service reply is not JSON: ${text.slice(0, BODY_EXCERPT_CHARS)}`,
    );
  }
}

function statusProblem(response: Response, body: string): string {
  return `HTTP ${response.status} ${response.statusText}: ${body.slice(0, BODY_EXCERPT_CHARS)}`;
}

/** `Retry-After` in seconds (the form rate limiters send); dates and junk are ignored. */
function retryAfterMs(response: Response): number | undefined {
  const seconds = Number(response.headers.get('retry-after') ?? Number.NaN);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : undefined;
}

/** fetch hides the socket error behind "fetch failed"; the cause says what actually happened. */
function describeFetchError(error: unknown): string {
  if (error instanceof Error && error.name === 'TimeoutError') return 'timed out';
  const cause = error instanceof Error ? error.cause : undefined;
  return cause === undefined
    ? errorMessage(error)
    : `${errorMessage(error)} (${errorMessage(cause)})`;
}
