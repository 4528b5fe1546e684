import { decideCrossThreadLink } from '@engram/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeChatServer, type FakeChatServer } from '../testing/fake-chat-server';
import { LlmContinuityAssessorClient, parseContinuityAnswer } from './continuity-assessor';
import { OpenAiCompatibleChatClient } from './openai-compatible-chat-client';

const AT = Date.UTC(2026, 10, 23, 9);

describe('LlmContinuityAssessorClient', () => {
  let server: FakeChatServer;
  let assessor: LlmContinuityAssessorClient;

  beforeAll(async () => {
    server = await startFakeChatServer({ model: 'judge' });
    assessor = new LlmContinuityAssessorClient(
      new OpenAiCompatibleChatClient({ baseUrl: server.baseUrl, model: 'judge', maxAttempts: 1 }),
    );
  });
  afterAll(() => server.close());

  const input = {
    opening: {
      threadId: 'new',
      tenantId: 't',
      userId: 'u',
      openedAt: AT,
      text: 'users get logged out when two tabs refresh at once',
    },
    candidates: [
      {
        threadId: 'old',
        tenantId: 't',
        userId: 'u',
        lastActivityAt: AT - 3_600_000,
        recentTurns: ['fix the token refresh race in src/auth/refresh.ts'],
      },
    ],
  };

  it('should ask with the seed 004 inputs and let a confident LLM overrule the algorithm', async () => {
    server.next({
      kind: 'reply',
      content:
        '```json\n{"related": true, "confidence": 0.95, "reasoning": "same refresh race",' +
        ' "key_signals": ["refresh", "logged out"]}\n```',
    });
    const { record } = await decideCrossThreadLink(input, assessor);
    const request = server.requests.at(-1)!.body as { messages: { content: string }[] };
    expect(request.messages[1].content).toContain('fix the token refresh race');
    expect(request.messages[1].content).toContain('New message: users get logged out');
    expect(record).toMatchObject({
      decision: 'LINK',
      uncertain: true,
      decidedBy: 'llm',
      llmStatus: 'ok',
      llm: { related: true, confidence: 0.95, keySignals: ['refresh', 'logged out'] },
    });
    expect(record!.algorithmic.link).toBe(false);
  });

  it('should leave the decision to the algorithm when the model answers nonsense', async () => {
    server.next({ kind: 'reply', content: 'I think they might be related.' });
    const { record } = await decideCrossThreadLink(input, assessor);
    expect(record).toMatchObject({ decision: 'NO_LINK', decidedBy: 'algorithmic', llm: null });
    expect(record!.llmStatus).toBe('error');
  });

  it('should refuse answers without a boolean related and a numeric confidence', () => {
    expect(() => parseContinuityAnswer('{"related": "yes", "confidence": 0.9}')).toThrow(
      /boolean "related"/,
    );
    expect(parseContinuityAnswer('ok {"related": false, "confidence": 0.8} done')).toEqual({
      related: false,
      confidence: 0.8,
      reasoning: '',
      keySignals: [],
    });
  });
});
