import type { Memory } from '@engram/contracts';
import { describe, expect, it } from 'vitest';
import { distillExtractively } from './extractive/extractive-distiller';
import { distillationToMemories, memoryIdOf, workStateMemoryId } from './memories';
import { DISTILLED_HALF_LIFE_DAYS, halfLifeDaysOf, memoryTypeOf } from './memory-types';
import { debuggingSession, SessionBuilder } from './testing/session-builder';
import { distillationWindow } from './triggers';
import type { Distillation } from './types';

function debugDistillation(): Distillation {
  const session = debuggingSession();
  const decision = distillationWindow(session.episodeClosed(1, 6, 'ep-debug'), session.events());
  if (decision.kind !== 'distill') throw new Error(decision.reason);
  return distillExtractively(decision.window);
}

function byContent(memories: Memory[], fragment: string): Memory {
  const memory = memories.find((m) => m.content.includes(fragment));
  if (memory === undefined) throw new Error(`no memory with "${fragment}"`);
  return memory;
}

describe('memoryTypeOf', () => {
  it.each([
    ['rule', 'Rule: never force push', 'preference'],
    ['preference', 'Preference: use pnpm instead of npm', 'preference'],
    ['correction', 'Correction: it is in libs/config.', 'gotcha'],
    ['decision', "Decision: Let's use zod because …", 'decision'],
    ['state-change', 'Change: we no longer run the cron job', 'decision'],
    ['error-resolution', '`npm test` failed …', 'error_pattern'],
    ['command-fix', '`npx vitest` worked where `npm test` failed', 'gotcha'],
    ['file-change', 'Added retries to the client; edited src/a.ts', 'pattern'],
  ] as const)('should map the %s kind', (kind, text, type) => {
    expect(memoryTypeOf({ kind, text })).toBe(type);
  });

  it.each([
    ['Developer rule: "never mock the database in integration tests"', 'preference'],
    ['The user prefers small pull requests', 'preference'],
    ['Root cause: a module-level cache leaked between tests', 'error_pattern'],
    ['ECONNREFUSED from Kafka when the broker is not up yet', 'error_pattern'],
    ['Switched to vitest, replacing jest', 'decision'],
    ['Watch out: the registry silently drops unknown fields', 'gotcha'],
    ['Integration tests share one Kafka broker per run', 'pattern'],
  ])('should read the type of an LLM fact from its content: %s', (text, type) => {
    expect(memoryTypeOf({ kind: null, text })).toBe(type);
  });
});

describe('distillationToMemories', () => {
  const distillation = debugDistillation();
  const memories = distillationToMemories(distillation);

  it('should make one memory per 🔴 and 🟡 fact, none for 🟢', () => {
    const facts = distillation.segments.flatMap((s) => s.facts);
    expect(memories).toHaveLength(facts.filter((f) => f.priority !== '🟢').length);
    expect(memories.some((m) => m.content.startsWith('Explored the code'))).toBe(false);
  });

  it('should set type, confidence by priority, half-life by type, provenance and source', () => {
    const fix = byContent(memories, 'fixed by editing');
    expect(fix).toMatchObject({
      memoryType: 'error_pattern',
      confidence: 0.85,
      decayHalfLifeDays: 30,
      source: 'distilled',
      scope: 'module',
      episodeId: 'ep-debug',
      provenanceSessionIds: ['sess-debug'],
      sourceEventIds: ['sess-debug-t3', 'sess-debug-t4', 'sess-debug-t6', 'sess-debug-t7'],
      relatedFiles: ['src/auth/cache.ts', 'src/auth/clock.ts'],
      relatedModules: ['src/auth'],
      userVerified: false,
      needsReview: false,
      tenantId: 'acme',
      projectId: 'acme/api',
    });
    // Edits that served the correction are 🟢 bookkeeping: the correction is the memory.
    expect(memories.some((m) => m.content.startsWith('Edited '))).toBe(false);
    expect(byContent(memories, 'Correction:')).toMatchObject({
      memoryType: 'gotcha',
      decayHalfLifeDays: 90,
    });
  });

  it("should take every time from the facts' events, never from a clock", () => {
    const fix = byContent(memories, 'fixed by editing');
    const fact = distillation.segments[0].facts.find((f) => f.text === fix.content);
    expect(fix.createdAt).toBe(fact?.at);
    expect(fix.timestamp).toBe(fact?.at);
    expect(fix.lastAccessedAt).toBe(fact?.at);
  });

  it('should give deterministic ids: uuid v5 of tenant, project, type and normalised content', () => {
    const fix = byContent(memories, 'fixed by editing');
    expect(fix.memoryId).toBe(memoryIdOf('acme', 'acme/api', 'error_pattern', fix.content));
    expect(fix.memoryId).toBe(
      memoryIdOf('acme', 'acme/api', 'error_pattern', `  ${fix.content.toUpperCase()} `),
    );
    expect(fix.memoryId).not.toBe(memoryIdOf('acme', 'other', 'error_pattern', fix.content));
    expect(fix.memoryId).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
  });

  it('should produce identical records for a redelivered trigger', () => {
    expect(distillationToMemories(debugDistillation())).toEqual(memories);
  });

  it('should make a work_state memory from the current task, one per session', () => {
    const s = new SessionBuilder('sess-wip', Date.UTC(2026, 1, 18, 8));
    s.user('Port the rate limiter in src/limits/rate.ts to the token bucket algorithm');
    s.tool('Bash', { command: 'npm test -- limits', error: 'expected 10 to be 5' });
    const decision = distillationWindow(s.compactionPending(), s.events());
    if (decision.kind !== 'distill') throw new Error(decision.reason);
    const result = distillationToMemories(distillExtractively(decision.window));
    const workState = result.find((m) => m.memoryType === 'work_state');
    expect(workState).toMatchObject({
      memoryId: workStateMemoryId('acme', 'acme/api', 'sess-wip'),
      decayHalfLifeDays: DISTILLED_HALF_LIFE_DAYS.work_state,
      scope: 'session',
      confidence: 0.6,
    });
    expect(workState?.content).toContain('Primary: Port the rate limiter');
    expect(JSON.parse(workState?.workState?.methodologyStateJson ?? '{}')).toMatchObject({
      trigger: 'CompactionPending',
    });
  });

  it('should keep 🟢 facts when asked, with a one-day half-life', () => {
    const all = distillationToMemories(distillation, { minPriority: '🟢' });
    expect(byContent(all, 'Explored the code')).toMatchObject({
      confidence: 0.35,
      decayHalfLifeDays: 1,
    });
  });

  it('should cap half-lives by priority', () => {
    expect(halfLifeDaysOf('decision', '🔴')).toBeNull();
    expect(halfLifeDaysOf('decision', '🟡')).toBe(14);
    expect(halfLifeDaysOf('error_pattern', '🟡')).toBe(14);
    expect(halfLifeDaysOf('work_state', '🟡')).toBe(7);
  });
});
