/**
 * A chat model. The distiller depends on this interface only, so the model is a deployment
 * choice (Ollama on a laptop, vLLM or OpenAI in production) or absent (the extractive distiller).
 */
export interface LlmClient {
  /** Names the endpoint and model, e.g. `openai-compatible:llama3.1:8b`; logged with each call. */
  readonly id: string;
  /** One completion; rejects with a typed error (see llm-errors.ts) when it cannot get one. */
  complete(request: ChatRequest): Promise<ChatCompletion>;
}

/** Nest DI token for the LlmClient port. */
export const LLM_CLIENT = Symbol('LlmClient');

export type ChatRole = 'system' | 'user' | 'assistant';

export interface ChatMessage {
  role: ChatRole;
  content: string;
}

export interface ChatRequest {
  messages: readonly ChatMessage[];
  /** Completion tokens; capped by the client's budget (default: the client's maximum). */
  maxTokens?: number;
  /** Default: the client's (0 unless configured: distillation wants determinism). */
  temperature?: number;
  /** Aborts the call, retries included. */
  signal?: AbortSignal;
}

export interface ChatUsage {
  promptTokens: number;
  completionTokens: number;
}

export interface ChatCompletion {
  text: string;
  /** `stop`, `length`, … as the server said, or null when it did not. */
  finishReason: string | null;
  /** The model stopped at the token limit: the text is cut off (parsers must cope). */
  truncated: boolean;
  /** The model the server says answered. */
  model: string;
  usage: ChatUsage | null;
  /** HTTP attempts made (1 when the first succeeded). */
  attempts: number;
  /** The prompt was trimmed to fit the token budget. */
  trimmed: boolean;
}
