// The LLM reflector against an in-process server speaking the OpenAI chat-completions wire format
// (a real LLM is a paid external service); the client is the real one.
import { OpenAiCompatibleChatClient } from '@engram/ai';
import {
  COMPRESSION_GUIDANCE,
  DownstreamUnavailableError,
  reflectExtractively,
} from '@engram/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startFakeChatServer,
  type FakeChatServer,
} from '../../../../libs/ai/src/testing/fake-chat-server';
import {
  REFLECT_AT,
  weekOfDistillations,
} from '../../../../libs/core/src/distillation/testing/reflector-fixtures';
import { ExtractiveProjectReflector, LlmProjectReflector } from './project-reflector';

const MODEL = 'llama3.1:8b';
const INPUT = {
  tenantId: 'acme',
  projectId: 'acme/api',
  now: REFLECT_AT,
  distillations: weekOfDistillations(),
};
const CONCISE = `<proposals>
## Proposed for: Hard Rules
- Never commit the .env file.
- Always run the auth tests with --no-file-parallelism, they share the clock.
## Proposed for: Patterns
- Use \`npx vitest run src/auth\`: \`npm run test:unit\` cannot find vitest/config.
- The moon is made of cheese.
</proposals>
<summary>Secrets and test rules.</summary>`;
/** Longer than the distillations it reflects: not a compression. */
const VERBOSE = `<proposals>\n## Proposed for: Patterns\n${'- Never commit the .env file, really.\n'.repeat(400)}</proposals>`;

describe('LlmProjectReflector', () => {
  let server: FakeChatServer;
  let reflector: LlmProjectReflector;

  beforeAll(async () => {
    server = await startFakeChatServer({ model: MODEL });
    const client = new OpenAiCompatibleChatClient({
      baseUrl: server.baseUrl,
      model: MODEL,
      maxAttempts: 1,
      timeoutMs: 5_000,
    });
    reflector = new LlmProjectReflector(client);
  });
  afterAll(() => server.close());

  const userPrompts = (from: number) =>
    server.requests.slice(from).map((r) => {
      const body = r.body as { messages: { role: string; content: string }[] };
      return body.messages.find((m) => m.role === 'user')!.content;
    });

  it('should propose what the model wrote, with evidence, and drop lines no fact supports', async () => {
    server.next({ kind: 'reply', content: CONCISE });
    const result = await reflector.reflect(INPUT);
    expect(result).toMatchObject({ method: 'llm', attempts: 1, fallback: null, compressed: true });
    expect(result.proposals.map((p) => [p.proposalId, p.section, p.text])).toEqual([
      ['p-20260217-001', 'Hard Rules', 'Never commit the .env file.'],
      [
        'p-20260217-002',
        'Hard Rules',
        'Always run the auth tests with --no-file-parallelism, they share the clock.',
      ],
      [
        'p-20260217-003',
        'Patterns',
        'Use `npx vitest run src/auth`: `npm run test:unit` cannot find vitest/config.',
      ],
    ]);
    for (const p of result.proposals) expect(p.evidence.eventIds.length).toBeGreaterThan(0);
    expect(result.skipped).toContainEqual({
      text: 'The moon is made of cheese.',
      reason: 'no-evidence',
    });
    expect(result.outputTokens).toBeLessThan(result.inputTokens);
  });

  it('should ask again with guidance levels 1 then 2 while the answer is not shorter', async () => {
    const before = server.requests.length;
    server.next(
      { kind: 'reply', content: VERBOSE },
      { kind: 'reply', content: VERBOSE },
      { kind: 'reply', content: CONCISE },
    );
    const result = await reflector.reflect(INPUT);
    expect(result).toMatchObject({ method: 'llm', attempts: 3 });
    const prompts = userPrompts(before);
    expect(prompts).toHaveLength(3);
    expect(prompts[0]).not.toContain('IMPORTANT: Your previous output was too large');
    expect(prompts[1].endsWith(COMPRESSION_GUIDANCE[1])).toBe(true);
    expect(prompts[2].endsWith(COMPRESSION_GUIDANCE[2])).toBe(true);
  });

  it('should fall back to the extractive reflector after level 2, and when the model refuses', async () => {
    server.next(
      { kind: 'reply', content: VERBOSE },
      { kind: 'reply', content: VERBOSE },
      { kind: 'reply', content: VERBOSE },
    );
    const given = await reflector.reflect(INPUT);
    expect(given).toMatchObject({ method: 'extractive', attempts: 3 });
    expect(given.fallback).toMatch(/not shorter than the input .* after guidance level 2/);
    expect(given.proposals).toEqual(reflectExtractively(INPUT).proposals);

    server.next({ kind: 'status', status: 400, body: { error: { message: 'bad request' } } });
    const refused = await reflector.reflect(INPUT);
    expect(refused).toMatchObject({ method: 'extractive', attempts: 1 });
    expect(refused.fallback).toMatch(/refused/);
  });

  it('should throw an outage on, so the transaction is retried and no reflection is skipped', async () => {
    server.next({ kind: 'status', status: 503 });
    await expect(reflector.reflect(INPUT)).rejects.toBeInstanceOf(DownstreamUnavailableError);
  });

  it('should reflect without a model exactly as the core does', async () => {
    const result = await new ExtractiveProjectReflector().reflect(INPUT);
    expect(result).toEqual({
      ...reflectExtractively(INPUT),
      method: 'extractive',
      attempts: 0,
      fallback: null,
    });
  });
});
