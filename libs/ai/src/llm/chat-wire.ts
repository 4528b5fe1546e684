import type { ChatMessage, ChatUsage } from './llm-client';
import { LlmServiceError } from './llm-errors';

/**
 * The OpenAI chat completions wire format, which Ollama (`/v1`), vLLM, llama.cpp's server and
 * OpenAI all speak: POST `{baseUrl}/chat/completions` with `{ model, messages, max_tokens,
 * temperature }`; reply `{ choices: [{ message: { content }, finish_reason }], model, usage }`.
 */
export interface ChatCompletionsRequest {
  model: string;
  messages: ChatMessage[];
  max_tokens: number;
  temperature: number;
  stream: false;
}

export interface ChatReply {
  text: string;
  finishReason: string | null;
  model: string | null;
  usage: ChatUsage | null;
}

/** The first choice of a reply. Anything that is not a chat completion is a broken reply. */
export function parseChatReply(body: unknown): ChatReply {
  if (!isRecord(body)) throw brokenReply('the body is not a JSON object');
  if (isRecord(body.error)) {
    const message = typeof body.error.message === 'string' ? body.error.message : 'unknown';
    throw brokenReply(`it carries an error: ${message}`);
  }
  const choices = body.choices;
  if (!Array.isArray(choices) || choices.length === 0 || !isRecord(choices[0])) {
    throw brokenReply('no "choices" array with a choice object');
  }
  const choice = choices[0];
  if (!isRecord(choice.message)) throw brokenReply('the first choice has no "message" object');
  const finishReason = typeof choice.finish_reason === 'string' ? choice.finish_reason : null;
  return {
    text: contentText(choice.message.content),
    finishReason,
    model: typeof body.model === 'string' ? body.model : null,
    usage: usageOf(body.usage),
  };
}

/** A string, null (nothing generated), or an array of content parts (`{ type: 'text', text }`). */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (content === null || content === undefined) return '';
  if (Array.isArray(content)) {
    return content
      .map((part) => (isRecord(part) && typeof part.text === 'string' ? part.text : ''))
      .join('');
  }
  throw brokenReply('the message content is neither text nor content parts');
}

function usageOf(usage: unknown): ChatUsage | null {
  if (!isRecord(usage)) return null;
  const { prompt_tokens: prompt, completion_tokens: completion } = usage;
  if (typeof prompt !== 'number' || typeof completion !== 'number') return null;
  return { promptTokens: prompt, completionTokens: completion };
}

/** The message of an OpenAI-style error body (`{ error: { message } }`), else the raw text. */
export function errorBodyMessage(text: string): string {
  try {
    const body: unknown = JSON.parse(text);
    if (isRecord(body) && isRecord(body.error) && typeof body.error.message === 'string') {
      return body.error.message;
    }
  } catch {
    // Not JSON: the raw text says what there is to say.
  }
  return text;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function brokenReply(problem: string): LlmServiceError {
  return new LlmServiceError(`chat service reply is not a chat completion: ${problem}`);
}
