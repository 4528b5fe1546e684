import type { ChatMessage } from './llm-client';
import { LlmTokenBudgetError } from './llm-errors';

/**
 * Token estimates without a tokenizer: about four characters per token, plus a few tokens of
 * framing per message (the chat template's role markers). Model-independent by design, the same
 * rule as `estimateTokens` of @engram/core's distillation; budgets keep a margin for the error.
 */
export const CHARS_PER_TOKEN = 4;
export const TOKENS_PER_MESSAGE = 4;

export function estimateMessageTokens(messages: readonly ChatMessage[]): number {
  return messages.reduce(
    (sum, message) =>
      sum + Math.ceil(message.content.length / CHARS_PER_TOKEN) + TOKENS_PER_MESSAGE,
    0,
  );
}

/** What to do with a prompt over budget: refuse it, or trim it to fit. */
export type OverBudgetPolicy = 'refuse' | 'trim';

export interface FittedPrompt {
  messages: ChatMessage[];
  estimatedTokens: number;
  trimmed: boolean;
}

/**
 * The messages within `budget` tokens. Under `refuse`, an over-budget prompt is an
 * LlmTokenBudgetError. Under `trim`: system messages and the last message are kept; older
 * messages between them are dropped, oldest first; then the longest remaining non-system message
 * loses its middle (its start and end are what distillation prompts need), with a marker saying
 * how much went. When even that cannot fit (the system messages alone are over), it refuses.
 */
export function fitToBudget(
  messages: readonly ChatMessage[],
  budget: number,
  policy: OverBudgetPolicy,
): FittedPrompt {
  const estimated = estimateMessageTokens(messages);
  if (estimated <= budget) {
    return { messages: [...messages], estimatedTokens: estimated, trimmed: false };
  }
  if (policy === 'refuse') throw overBudget(estimated, budget, 'refused (overBudget: refuse)');
  const kept = dropMiddleMessages(messages, budget);
  let tokens = estimateMessageTokens(kept);
  if (tokens > budget) {
    const index = longestTrimmable(kept);
    if (index >= 0) {
      const excessChars = (tokens - budget) * CHARS_PER_TOKEN;
      kept[index] = { ...kept[index], content: cutMiddle(kept[index].content, excessChars) };
      tokens = estimateMessageTokens(kept);
    }
  }
  if (tokens > budget) throw overBudget(estimated, budget, 'cannot be trimmed to fit');
  return { messages: kept, estimatedTokens: tokens, trimmed: true };
}

function dropMiddleMessages(messages: readonly ChatMessage[], budget: number): ChatMessage[] {
  const kept = [...messages];
  let i = 0;
  // Never the last message: it is the request itself.
  while (estimateMessageTokens(kept) > budget && i < kept.length - 1) {
    if (kept[i].role === 'system') i += 1;
    else kept.splice(i, 1);
  }
  return kept;
}

function longestTrimmable(messages: readonly ChatMessage[]): number {
  let index = -1;
  messages.forEach((message, i) => {
    if (message.role === 'system') return;
    if (index < 0 || message.content.length > messages[index].content.length) index = i;
  });
  return index;
}

/** `content` without about `excessChars` characters from its middle, plus a marker. */
function cutMiddle(content: string, excessChars: number): string {
  const marker = (removed: number): string =>
    `\n[… ${removed} characters trimmed to fit the token budget …]\n`;
  // The marker takes room too; remove enough for it as well.
  const remove = Math.min(
    content.length,
    excessChars + marker(content.length).length + CHARS_PER_TOKEN,
  );
  const keep = content.length - remove;
  const head = Math.ceil(keep / 2);
  const tail = keep - head;
  return `${content.slice(0, head)}${marker(remove)}${tail > 0 ? content.slice(content.length - tail) : ''}`;
}

function overBudget(estimated: number, budget: number, why: string): LlmTokenBudgetError {
  return new LlmTokenBudgetError(
    `prompt of about ${estimated} tokens is over the budget of ${budget} tokens: ${why}; shorten the prompt or raise maxPromptTokens`,
    { estimatedTokens: estimated, budgetTokens: budget },
  );
}
