import { describe, expect, it } from 'vitest';
import type { ChatMessage } from './llm-client';
import { LlmTokenBudgetError } from './llm-errors';
import { estimateMessageTokens, fitToBudget } from './token-budget';

const system: ChatMessage = { role: 'system', content: 's'.repeat(400) };

describe('estimateMessageTokens', () => {
  it('should count four characters a token plus framing per message', () => {
    expect(estimateMessageTokens([{ role: 'user', content: 'abcdefgh' }])).toBe(6);
    expect(estimateMessageTokens([])).toBe(0);
  });
});

describe('fitToBudget', () => {
  it('should pass a prompt within budget unchanged', () => {
    const messages = [system, { role: 'user' as const, content: 'hi' }];
    expect(fitToBudget(messages, 1_000, 'refuse')).toEqual({
      messages,
      estimatedTokens: 109,
      trimmed: false,
    });
  });

  it('should refuse over budget under the refuse policy', () => {
    expect(() => fitToBudget([system], 50, 'refuse')).toThrow(LlmTokenBudgetError);
  });

  it('should drop older messages first, keeping system messages and the last one', () => {
    const messages: ChatMessage[] = [
      system,
      { role: 'user', content: 'u'.repeat(400) },
      { role: 'assistant', content: 'a'.repeat(400) },
      { role: 'user', content: 'the request' },
    ];
    const fitted = fitToBudget(messages, 120, 'trim');
    expect(fitted.messages).toEqual([system, messages[3]]);
    expect(fitted.trimmed).toBe(true);
    expect(fitted.estimatedTokens).toBeLessThanOrEqual(120);
  });

  it('should cut the middle of the longest message when dropping is not enough', () => {
    const fitted = fitToBudget(
      [system, { role: 'user', content: `HEAD${'m'.repeat(2_000)}TAIL` }],
      300,
      'trim',
    );
    expect(fitted.estimatedTokens).toBeLessThanOrEqual(300);
    const content = fitted.messages[1].content;
    expect(content.startsWith('HEAD')).toBe(true);
    expect(content.endsWith('TAIL')).toBe(true);
    expect(content).toMatch(/\[… \d+ characters trimmed to fit the token budget …\]/);
  });

  it('should refuse when the system messages alone are over budget', () => {
    expect(() => fitToBudget([system, { role: 'user', content: 'x' }], 50, 'trim')).toThrow(
      /cannot be trimmed to fit/,
    );
  });
});
