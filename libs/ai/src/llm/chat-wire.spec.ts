import { describe, expect, it } from 'vitest';
import { errorBodyMessage, parseChatReply } from './chat-wire';
import { LlmServiceError } from './llm-errors';

describe('parseChatReply', () => {
  it('should read the first choice, the model and the usage', () => {
    expect(
      parseChatReply({
        model: 'gpt-4o-mini',
        choices: [
          { index: 0, message: { role: 'assistant', content: 'hello' }, finish_reason: 'stop' },
        ],
        usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
      }),
    ).toEqual({
      text: 'hello',
      finishReason: 'stop',
      model: 'gpt-4o-mini',
      usage: { promptTokens: 3, completionTokens: 1 },
    });
  });

  it('should join content parts and tolerate missing optional fields', () => {
    expect(
      parseChatReply({
        choices: [
          {
            message: {
              content: [
                { type: 'text', text: 'a' },
                { type: 'image' },
                { type: 'text', text: 'b' },
              ],
            },
          },
        ],
      }),
    ).toEqual({ text: 'ab', finishReason: null, model: null, usage: null });
  });

  it.each([
    ['not an object', 'text'],
    ['no choices', {}],
    ['empty choices', { choices: [] }],
    ['no message', { choices: [{ text: 'legacy completion' }] }],
    ['an error body', { error: { message: 'model overloaded' } }],
    ['a numeric content', { choices: [{ message: { content: 42 } }] }],
  ])('should reject %s as a broken reply', (_name, body) => {
    expect(() => parseChatReply(body)).toThrow(LlmServiceError);
  });
});

describe('errorBodyMessage', () => {
  it("should take an OpenAI error's message, else the raw text", () => {
    expect(errorBodyMessage('{"error":{"message":"Rate limit reached","type":"requests"}}')).toBe(
      'Rate limit reached',
    );
    expect(errorBodyMessage('<html>Bad Gateway</html>')).toBe('<html>Bad Gateway</html>');
  });
});
