import { describe, expect, it } from 'vitest';
import { buildDistillationPrompt, DISTILLER_SYSTEM_PROMPT } from './distill-prompt';
import { debuggingSession, SessionBuilder } from './testing/session-builder';
import { estimateTokens } from './tokens';
import { distillationWindow, type DistillationWindow } from './triggers';

function windowOf(session: SessionBuilder): DistillationWindow {
  const decision = distillationWindow(
    session.sessionEnded(Math.max(5, session.prompts.length)),
    session.events(),
  );
  if (decision.kind !== 'distill') throw new Error(decision.reason);
  return decision.window;
}

describe('buildDistillationPrompt', () => {
  it('should send the segment-format system prompt and one [HH:MM] line per event', () => {
    const prompt = buildDistillationPrompt(windowOf(debuggingSession()));
    expect(prompt.system).toBe(DISTILLER_SYSTEM_PROMPT);
    expect(prompt.system).toContain('<segment>');
    expect(prompt.system).toContain('NEVER write a clock time that is not in the transcript');
    const lines = prompt.user.split('\n');
    expect(lines[0]).toBe(
      'Distill a session that has ended (session sess-debug, project acme/api).',
    );
    expect(lines).toContain(
      '[09:02] TOOL Bash `npm test -- src/auth/refresh.spec.ts` → error: AssertionError: expected 401 to be 200 at refresh.spec.ts:42',
    );
    expect(lines).toContain(
      "[09:03] USER: No, don't touch the cache TTL. The real problem is the clock skew in src/auth/clock.ts.",
    );
    expect(lines).toContain('[09:02] TOOL Edit src/auth/cache.ts → ok');
    expect(prompt.omittedEntries).toBe(0);
    expect([...prompt.knownTimes].sort()).toEqual([
      '09:01',
      '09:02',
      '09:03',
      '09:04',
      '09:05',
      '09:06',
      '09:07',
      '09:08',
      '09:09',
    ]);
    expect(prompt.estimatedTokens).toBe(
      estimateTokens(prompt.system) + estimateTokens(prompt.user),
    );
  });

  it('should never put a secret into the prompt', () => {
    const s = new SessionBuilder('sess-secret', Date.UTC(2026, 1, 16, 9));
    s.user('Deploy with token ghp_abcdefghijklmnopqrstuvwxyz0123456789AB please');
    s.tool('Bash', {
      command:
        'curl -H "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlc2lnbmF0dXJl" https://api.example.com',
    });
    const prompt = buildDistillationPrompt(windowOf(s));
    expect(prompt.user).not.toContain('ghp_abcdefghij');
    expect(prompt.user).not.toContain('eyJhbGciOiJIUzI1NiJ9');
    expect(prompt.user).toContain('[REDACTED:');
  });

  it('should stay within the token budget, dropping successful reads first', () => {
    const s = new SessionBuilder('sess-big', Date.UTC(2026, 1, 16, 9));
    s.user('Refactor the payment module to use the new ledger API across all services');
    for (let i = 0; i < 40; i += 1) {
      s.tool('Read', { files: [`src/payments/file-${i}.ts`], after: 5 });
    }
    s.tool('Edit', { files: ['src/payments/ledger.ts'] });
    const full = buildDistillationPrompt(windowOf(s), { maxPromptTokens: 100_000 });
    const budget = full.estimatedTokens - 200;
    const prompt = buildDistillationPrompt(windowOf(s), { maxPromptTokens: budget });
    expect(prompt.estimatedTokens).toBeLessThanOrEqual(budget);
    expect(prompt.omittedEntries).toBe(40);
    expect(prompt.user).toContain('TOOL Edit src/payments/ledger.ts');
    expect(prompt.user).toContain('[… 40 transcript entries left out to fit the token budget …]');
  });

  it('should keep the start and the end of a transcript too long even without reads', () => {
    const s = new SessionBuilder('sess-long', Date.UTC(2026, 1, 16, 9));
    for (let i = 0; i < 60; i += 1) {
      s.user(
        `Step ${i}: adjust the rate limiter window for tenant ${i} and rerun the soak test`,
        90,
      );
    }
    const budget = estimateTokens(DISTILLER_SYSTEM_PROMPT) + 400;
    const prompt = buildDistillationPrompt(windowOf(s), { maxPromptTokens: budget });
    expect(prompt.estimatedTokens).toBeLessThanOrEqual(budget);
    expect(prompt.user).toContain('USER: Step 0:');
    expect(prompt.user).toContain('USER: Step 59:');
    expect(prompt.user).not.toContain('USER: Step 30:');
    expect(prompt.omittedEntries).toBeGreaterThan(0);
    expect(prompt.user).toContain(`[… ${prompt.omittedEntries} transcript entries left out`);
    // Times of left-out entries are not offered to the model.
    expect(prompt.knownTimes.size).toBe(60 - prompt.omittedEntries);
  });
});
