import {
  backoffDelayMs,
  DownstreamUnavailableError,
  l2Normalise,
  MisconfigurationError,
  type BackoffOptions,
} from '@engram/core';
import { setTimeout as sleep } from 'node:timers/promises';
import { chunk } from './batches';
import type { Embedder } from './embedder';
import { EmbeddingServiceError } from './errors';
import {
  describeFetchError,
  judgeReply,
  optionProblems,
  postJson,
  type TransientFailure,
} from './http-exchange';
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
type Attempt = { ok: true; vectors: number[][] } | TransientFailure;

interface Settings {
  maxBatchSize: number;
  timeoutMs: number;
  maxAttempts: number;
  backoff: BackoffOptions;
}

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
      response = await postJson(
        this.url,
        request,
        this.options.apiKey,
        AbortSignal.timeout(this.settings.timeoutMs),
      );
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
    const reply = judgeReply(response, text, {
      name: 'embedding service',
      url: this.url,
      ServiceError: EmbeddingServiceError,
    });
    return reply.ok ? { ok: true, vectors: parseEmbeddingsReply(reply.body, inputCount) } : reply;
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
  const problems = optionProblems(options, {
    dims: options.dims,
    maxBatchSize: options.maxBatchSize,
    timeoutMs: options.timeoutMs,
    maxAttempts: options.maxAttempts,
  });
  if (problems.length > 0) {
    throw new MisconfigurationError(`OpenAI-compatible embedder: ${problems.join('; ')}`, {
      problems,
    });
  }
}

/** The body, or undefined when the connection dropped mid-reply (a transient failure). */
async function readBody(response: Response): Promise<string | undefined> {
  try {
    return await response.text();
  } catch {
    return undefined;
  }
}
