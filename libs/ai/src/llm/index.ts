export * from './llm-client';
export * from './llm-errors';
export { parseChatReply, type ChatCompletionsRequest, type ChatReply } from './chat-wire';
export {
  CHARS_PER_TOKEN as LLM_CHARS_PER_TOKEN,
  estimateMessageTokens,
  fitToBudget,
  type FittedPrompt,
  type OverBudgetPolicy,
} from './token-budget';
export {
  OpenAiCompatibleChatClient,
  retryDelayMs,
  type OpenAiCompatibleChatOptions,
} from './openai-compatible-chat-client';
export * from './continuity-assessor';
