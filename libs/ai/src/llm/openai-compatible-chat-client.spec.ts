import { DownstreamUnavailableError, MisconfigurationError } from '@engram/core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFakeChatServer, type FakeChatServer } from '../testing/fake-chat-server';
import type { ChatMessage } from './llm-client';
import { LlmServiceError, LlmTokenBudgetError } from './llm-errors';
import {
  OpenAiCompatibleChatClient,
  retryDelayMs,
  type OpenAiCompatibleChatOptions,
} from './openai-compatible-chat-client';

const MODEL = 'llama3.1:8b';
const API_KEY = 'sk-test';
const MESSAGES: ChatMessage[] = [
  { role: 'system', content: 'You are the distiller.' },
  { role: 'user', content: 'Distill this transcript.' },
];

describe('OpenAiCompatibleChatClient against an OpenAI-compatible server', () => {
  let server: FakeChatServer;

  beforeAll(async () => {
    server = await startFakeChatServer({ model: MODEL, apiKey: API_KEY });
  });
  afterAll(() => server.close());
  afterEach(() => {
    server.requests.length = 0;
  });

  function client(
    overrides: Partial<OpenAiCompatibleChatOptions> = {},
  ): OpenAiCompatibleChatClient {
    return new OpenAiCompatibleChatClient({
      baseUrl: server.baseUrl,
      model: MODEL,
      apiKey: API_KEY,
      backoff: { initialMs: 1, maxMs: 20 },
      timeoutMs: 2_000,
      ...overrides,
    });
  }

  it('should post { model, messages, max_tokens, temperature } with the key and return the completion', async () => {
    const completion = await client().complete({ messages: MESSAGES, maxTokens: 256 });
    expect(server.requests).toEqual([
      {
        path: '/v1/chat/completions',
        authorization: `Bearer ${API_KEY}`,
        contentType: 'application/json',
        body: { model: MODEL, messages: MESSAGES, max_tokens: 256, temperature: 0, stream: false },
      },
    ]);
    expect(completion).toEqual({
      text: 'echo: Distill this transcript.',
      finishReason: 'stop',
      truncated: false,
      model: MODEL,
      usage: { promptTokens: 12, completionTokens: 8 },
      attempts: 1,
      trimmed: false,
    });
  });

  it('should send no Authorization header without a key', async () => {
    const open = await startFakeChatServer({ model: MODEL });
    try {
      const c = new OpenAiCompatibleChatClient({ baseUrl: `${open.baseUrl}/`, model: MODEL });
      await c.complete({ messages: MESSAGES, temperature: 0.7 });
      expect(open.requests[0].authorization).toBeUndefined();
      expect((open.requests[0].body as { temperature: number }).temperature).toBe(0.7);
    } finally {
      await open.close();
    }
  });

  it('should cap the completion tokens at the configured maximum', async () => {
    await client({ maxCompletionTokens: 100 }).complete({ messages: MESSAGES, maxTokens: 5_000 });
    expect((server.requests[0].body as { max_tokens: number }).max_tokens).toBe(100);
  });

  it('should mark a completion cut at the token limit as truncated', async () => {
    server.next({
      kind: 'reply',
      content: '<observations>\n* 🔴 half a fa',
      finishReason: 'length',
    });
    const completion = await client().complete({ messages: MESSAGES });
    expect(completion).toMatchObject({
      text: '<observations>\n* 🔴 half a fa',
      finishReason: 'length',
      truncated: true,
    });
  });

  it('should read a null content as empty text', async () => {
    server.next({ kind: 'reply', content: null });
    await expect(client().complete({ messages: MESSAGES })).resolves.toMatchObject({ text: '' });
  });

  it('should retry 429 and 5xx with backoff, honouring Retry-After, then succeed', async () => {
    server.next(
      {
        kind: 'status',
        status: 429,
        body: { error: { message: 'Rate limit reached' } },
        headers: { 'retry-after': '0' },
      },
      { kind: 'status', status: 500, body: { error: { message: 'overloaded' } } },
      { kind: 'status', status: 503 },
    );
    const completion = await client().complete({ messages: MESSAGES });
    expect(completion.attempts).toBe(4);
    expect(server.requests).toHaveLength(4);
  });

  it('should retry a dropped connection', async () => {
    server.next({ kind: 'drop' });
    await expect(client().complete({ messages: MESSAGES })).resolves.toMatchObject({ attempts: 2 });
  });

  it('should time out a slow answer, retry, and give up as unavailable after every attempt', async () => {
    server.next({ kind: 'delay', ms: 400 }, { kind: 'slow-body', ms: 400 });
    const error = await client({ timeoutMs: 100, maxAttempts: 2 })
      .complete({ messages: MESSAGES })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DownstreamUnavailableError);
    expect((error as DownstreamUnavailableError).retriable).toBe(true);
    expect((error as Error).message).toMatch(/failed 2 times; last: timed out after 100 ms/);
    expect(server.requests).toHaveLength(2);
  });

  it('should recover when only the first answer is slow', async () => {
    server.next({ kind: 'delay', ms: 400 });
    await expect(
      client({ timeoutMs: 100 }).complete({ messages: MESSAGES }),
    ).resolves.toMatchObject({ attempts: 2 });
  });

  it('should not retry a 4xx: a typed, non-retriable error with the server message', async () => {
    server.next({
      kind: 'status',
      status: 400,
      body: { error: { message: "'messages' is too long" } },
    });
    const error = await client()
      .complete({ messages: MESSAGES })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LlmServiceError);
    expect((error as LlmServiceError).retriable).toBe(false);
    expect((error as Error).message).toContain("HTTP 400 Bad Request: 'messages' is too long");
    expect(server.requests).toHaveLength(1);
  });

  it('should refuse a wrong key and an unknown model as service errors', async () => {
    await expect(client({ apiKey: 'wrong' }).complete({ messages: MESSAGES })).rejects.toThrow(
      /HTTP 401.*Incorrect API key/,
    );
    await expect(client({ model: 'gpt-nope' }).complete({ messages: MESSAGES })).rejects.toThrow(
      /HTTP 404.*The model 'gpt-nope' does not exist/,
    );
  });

  it('should not retry malformed replies', async () => {
    server.next({ kind: 'raw', body: '{"choices": [' });
    await expect(client().complete({ messages: MESSAGES })).rejects.toThrow(/reply is not JSON/);
    server.next({ kind: 'raw', body: '{"object": "list", "data": []}' });
    await expect(client().complete({ messages: MESSAGES })).rejects.toThrow(LlmServiceError);
    expect(server.requests).toHaveLength(2);
  });

  it('should refuse a prompt over the token budget before sending anything', async () => {
    const long: ChatMessage[] = [...MESSAGES, { role: 'user', content: 'x'.repeat(4_000) }];
    const error = await client({ maxPromptTokens: 500 })
      .complete({ messages: long })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LlmTokenBudgetError);
    expect((error as Error).message).toMatch(
      /prompt of about 1\d\d\d tokens is over the budget of 500 tokens/,
    );
    expect(server.requests).toHaveLength(0);
  });

  it('should trim a prompt over budget when told to, and say so', async () => {
    const long: ChatMessage[] = [
      { role: 'system', content: 'You are the distiller.' },
      { role: 'user', content: `START ${'x'.repeat(4_000)} END` },
    ];
    const completion = await client({ maxPromptTokens: 500, overBudget: 'trim' }).complete({
      messages: long,
    });
    expect(completion.trimmed).toBe(true);
    const sent = (server.requests[0].body as { messages: ChatMessage[] }).messages;
    expect(sent[0]).toEqual(long[0]);
    expect(sent[1].content.startsWith('START ')).toBe(true);
    expect(sent[1].content.endsWith(' END')).toBe(true);
    expect(sent[1].content).toMatch(/characters trimmed to fit the token budget/);
  });

  it('should leave room for the completion in the context window', async () => {
    const c = client({
      contextWindowTokens: 1_000,
      maxCompletionTokens: 900,
      maxPromptTokens: 5_000,
    });
    const messages: ChatMessage[] = [{ role: 'user', content: 'y'.repeat(600) }];
    await expect(c.complete({ messages })).rejects.toThrow(/over the budget of 100 tokens/);
    await expect(c.complete({ messages, maxTokens: 500 })).resolves.toMatchObject({ attempts: 1 });
  });

  it('should stop at once when the caller aborts, without retrying', async () => {
    server.next({ kind: 'delay', ms: 1_000 });
    const controller = new AbortController();
    const pending = client().complete({ messages: MESSAGES, signal: controller.signal });
    setTimeout(() => controller.abort(new Error('shutting down')), 50);
    await expect(pending).rejects.toThrow('shutting down');
    expect(server.requests).toHaveLength(1);
  });

  it('should stop during a backoff pause when the caller aborts', async () => {
    server.next({ kind: 'status', status: 500 });
    const controller = new AbortController();
    const c = client({ backoff: { initialMs: 5_000, maxMs: 5_000 } });
    const pending = c.complete({ messages: MESSAGES, signal: controller.signal });
    setTimeout(() => controller.abort(new Error('stop')), 100);
    await expect(pending).rejects.toThrow('stop');
    expect(server.requests).toHaveLength(1);
  });
});

describe('OpenAiCompatibleChatClient configuration', () => {
  it('should fail at construction with every problem named', () => {
    expect(
      () =>
        new OpenAiCompatibleChatClient({
          baseUrl: 'localhost:11434',
          model: '',
          timeoutMs: 0,
          temperature: 3,
        }),
    ).toThrow(MisconfigurationError);
    expect(() => new OpenAiCompatibleChatClient({ baseUrl: 'localhost:11434', model: '' })).toThrow(
      /baseUrl must be an http\(s\) URL.*model must be set/,
    );
    expect(
      () =>
        new OpenAiCompatibleChatClient({
          baseUrl: 'http://x',
          model: 'm',
          contextWindowTokens: 1_000,
          maxCompletionTokens: 2_000,
        }),
    ).toThrow(/contextWindowTokens \(1000\) must exceed maxCompletionTokens \(2000\)/);
  });

  it('should name itself after the model', () => {
    expect(new OpenAiCompatibleChatClient({ baseUrl: 'http://x/v1', model: 'qwen2.5' }).id).toBe(
      'openai-compatible:qwen2.5',
    );
  });
});

describe('retryDelayMs', () => {
  const backoff = { initialMs: 100, maxMs: 1_000 };

  it('should use full jitter under an exponential bound', () => {
    expect(retryDelayMs(0, backoff, undefined, () => 0.5)).toBe(100);
    expect(retryDelayMs(3, backoff, undefined, () => 0.5)).toBe(400);
    expect(retryDelayMs(3, backoff, undefined, () => 1)).toBe(800);
    expect(retryDelayMs(10, backoff, undefined, () => 1)).toBe(1_000);
  });

  it("should wait at least the server's Retry-After, but never above the maximum", () => {
    expect(retryDelayMs(0, backoff, 600, () => 0)).toBe(600);
    expect(retryDelayMs(0, backoff, 30_000, () => 0)).toBe(1_000);
  });
});
