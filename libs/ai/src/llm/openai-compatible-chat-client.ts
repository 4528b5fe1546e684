import {
  backoffDelayMs,
  DownstreamUnavailableError,
  MisconfigurationError,
  type BackoffOptions,
} from '@engram/core';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  describeFetchError,
  judgeReply,
  optionProblems,
  postJson,
  type TransientFailure,
} from '../http-exchange';
import {
  errorBodyMessage,
  parseChatReply,
  type ChatCompletionsRequest,
  type ChatReply,
} from './chat-wire';
import type { ChatCompletion, ChatRequest, LlmClient } from './llm-client';
import { LlmServiceError } from './llm-errors';
import { fitToBudget, type OverBudgetPolicy } from './token-budget';

export interface OpenAiCompatibleChatOptions {
  /** API root without the endpoint, e.g. `http://localhost:11434/v1` (Ollama). */
  baseUrl: string;
  model: string;
  /** Sent as a Bearer token when set (local servers need none). */
  apiKey?: string;
  /** Default `openai-compatible:<model>`. */
  id?: string;
  /** Per attempt, reading the reply included (default 120 s: local models are slow). */
  timeoutMs?: number;
  /** Attempts per call on 429, 5xx, timeouts and network errors (default 4). */
  maxAttempts?: number;
  /** Full-jitter exponential backoff between attempts (default 500 ms up to 16 s). */
  backoff?: BackoffOptions;
  /** Token budget of the prompt (default 16,000, estimated at 4 characters a token). */
  maxPromptTokens?: number;
  /** Most completion tokens a call may ask for (default 2,048); a larger request is capped. */
  maxCompletionTokens?: number;
  /** When set, prompt and completion together must fit it. */
  contextWindowTokens?: number;
  /** A prompt over budget is refused (default) or trimmed. */
  overBudget?: OverBudgetPolicy;
  /** Default 0: distillation wants the same answer twice. */
  temperature?: number;
  /** Source of the backoff jitter (tests pin it). */
  random?: () => number;
}

interface Settings {
  timeoutMs: number;
  maxAttempts: number;
  backoff: BackoffOptions;
  maxPromptTokens: number;
  maxCompletionTokens: number;
  contextWindowTokens: number | null;
  overBudget: OverBudgetPolicy;
  temperature: number;
  random: () => number;
}

/** How one HTTP attempt ended: a reply, or a transient failure worth another attempt. */
type Attempt = { ok: true; reply: ChatReply } | TransientFailure;

/**
 * Completions from any server speaking the OpenAI chat completions API (OpenAI, Ollama, vLLM,
 * llama.cpp) over Node's fetch: a token budget checked before sending, a timeout per attempt
 * (AbortController), retries with exponential backoff and jitter on 429, 5xx, timeouts and
 * network errors only, and typed errors: LlmTokenBudgetError (prompt over budget),
 * LlmServiceError (4xx, broken reply; not retriable), DownstreamUnavailableError (still failing
 * after every attempt; retriable).
 */
export class OpenAiCompatibleChatClient implements LlmClient {
  readonly id: string;
  private readonly url: string;
  private readonly settings: Settings;

  constructor(private readonly options: OpenAiCompatibleChatOptions) {
    assertOptions(options);
    this.id = options.id ?? `openai-compatible:${options.model}`;
    this.url = `${options.baseUrl.replace(/\/+$/, '')}/chat/completions`;
    this.settings = {
      timeoutMs: options.timeoutMs ?? 120_000,
      maxAttempts: options.maxAttempts ?? 4,
      backoff: options.backoff ?? { initialMs: 500, maxMs: 16_000 },
      maxPromptTokens: options.maxPromptTokens ?? 16_000,
      maxCompletionTokens: options.maxCompletionTokens ?? 2_048,
      contextWindowTokens: options.contextWindowTokens ?? null,
      overBudget: options.overBudget ?? 'refuse',
      temperature: options.temperature ?? 0,
      random: options.random ?? Math.random,
    };
  }

  async complete(request: ChatRequest): Promise<ChatCompletion> {
    const maxTokens = Math.min(
      request.maxTokens ?? this.settings.maxCompletionTokens,
      this.settings.maxCompletionTokens,
    );
    const fitted = fitToBudget(
      request.messages,
      this.promptBudget(maxTokens),
      this.settings.overBudget,
    );
    const body: ChatCompletionsRequest = {
      model: this.options.model,
      messages: fitted.messages,
      max_tokens: maxTokens,
      temperature: request.temperature ?? this.settings.temperature,
      stream: false,
    };
    const { reply, attempts } = await this.requestWithRetry(body, request.signal);
    return {
      text: reply.text,
      finishReason: reply.finishReason,
      truncated: reply.finishReason === 'length',
      model: reply.model ?? this.options.model,
      usage: reply.usage,
      attempts,
      trimmed: fitted.trimmed,
    };
  }

  /** Prompt tokens allowed when `maxTokens` are asked for. */
  private promptBudget(maxTokens: number): number {
    const window = this.settings.contextWindowTokens;
    return window === null
      ? this.settings.maxPromptTokens
      : Math.min(this.settings.maxPromptTokens, window - maxTokens);
  }

  private async requestWithRetry(
    body: ChatCompletionsRequest,
    signal: AbortSignal | undefined,
  ): Promise<{ reply: ChatReply; attempts: number }> {
    for (let attempt = 0; ; attempt += 1) {
      signal?.throwIfAborted();
      const outcome = await this.attempt(body, signal);
      if (outcome.ok) return { reply: outcome.reply, attempts: attempt + 1 };
      if (attempt + 1 >= this.settings.maxAttempts) {
        throw new DownstreamUnavailableError(
          `chat service ${this.url} failed ${attempt + 1} times; last: ${outcome.problem}`,
          { url: this.url, model: this.options.model, attempts: attempt + 1 },
          { cause: outcome.cause },
        );
      }
      await pause(
        retryDelayMs(attempt, this.settings.backoff, outcome.retryAfterMs, this.settings.random),
        signal,
      );
    }
  }

  private async attempt(
    body: ChatCompletionsRequest,
    signal: AbortSignal | undefined,
  ): Promise<Attempt> {
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, this.settings.timeoutMs);
    const forward = (): void => controller.abort(signal?.reason);
    signal?.addEventListener('abort', forward, { once: true });
    try {
      const response = await postJson(this.url, body, this.options.apiKey, controller.signal);
      const reply = judgeReply(response, await response.text(), {
        name: 'chat service',
        url: this.url,
        ServiceError: LlmServiceError,
        context: { model: this.options.model },
        bodyMessage: errorBodyMessage,
      });
      return reply.ok ? { ok: true, reply: parseChatReply(reply.body) } : reply;
    } catch (error) {
      signal?.throwIfAborted();
      if (error instanceof LlmServiceError) throw error;
      const problem = timedOut
        ? `timed out after ${this.settings.timeoutMs} ms`
        : `request failed: ${describeFetchError(error)}`;
      return { ok: false, problem, cause: error };
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', forward);
    }
  }
}

/** Full-jitter exponential backoff, at least the server's Retry-After, never above `maxMs`. */
export function retryDelayMs(
  attempt: number,
  backoff: BackoffOptions,
  retryAfter: number | undefined,
  random: () => number = Math.random,
): number {
  return Math.min(
    backoff.maxMs,
    Math.max(backoffDelayMs(attempt, backoff, random), retryAfter ?? 0),
  );
}

/** Waits, unless the caller aborts: then the caller's reason is thrown. */
async function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  try {
    await sleep(ms, undefined, signal === undefined ? undefined : { signal });
  } catch (error) {
    signal?.throwIfAborted();
    throw error;
  }
}

function assertOptions(options: OpenAiCompatibleChatOptions): void {
  const problems = optionProblems(options, {
    timeoutMs: options.timeoutMs,
    maxAttempts: options.maxAttempts,
    maxPromptTokens: options.maxPromptTokens,
    maxCompletionTokens: options.maxCompletionTokens,
    contextWindowTokens: options.contextWindowTokens,
  });
  const completion = options.maxCompletionTokens ?? 2_048;
  if (options.contextWindowTokens !== undefined && options.contextWindowTokens <= completion) {
    problems.push(
      `contextWindowTokens (${options.contextWindowTokens}) must exceed maxCompletionTokens (${completion})`,
    );
  }
  if (
    options.temperature !== undefined &&
    !(options.temperature >= 0 && options.temperature <= 2)
  ) {
    problems.push(`temperature must be in [0, 2], got ${options.temperature}`);
  }
  if (problems.length > 0) {
    throw new MisconfigurationError(`OpenAI-compatible chat client: ${problems.join('; ')}`, {
      problems,
    });
  }
}
