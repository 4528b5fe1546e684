import { describe, expect, it } from 'vitest';
import { formatDistillation } from '../format';
import { estimateTokens } from '../tokens';
import type { Distillation } from '../types';
import { COMPRESSION_GUIDANCE, compressionDecision, validateCompression } from './compression';
import {
  dayTokens,
  reflectionDecision,
  reflectionGuardKey,
  REFLECTION_TOKEN_THRESHOLD,
} from './reflection-trigger';
import { REFLECT_AT, weekOfDistillations } from '../testing/reflector-fixtures';
import { sectionNamed, sectionOf } from './sections';
import { applyTemporalGradient, condense } from './temporal-gradient';

const DAY = 86_400_000;
const MORNING = Date.UTC(2026, 1, 17, 4, 0);

describe('reflectionDecision', () => {
  it('should reflect as soon as the day passes 40k tokens, even before the schedule', () => {
    expect(
      reflectionDecision({
        now: MORNING,
        dayTokens: REFLECTION_TOKEN_THRESHOLD + 1,
        lastReflectedAt: null,
      }),
    ).toEqual({
      due: true,
      day: '2026-02-17',
      reason: 'token-threshold',
    });
  });

  it('should wait below the threshold until the daily schedule', () => {
    expect(
      reflectionDecision({
        now: MORNING,
        dayTokens: REFLECTION_TOKEN_THRESHOLD,
        lastReflectedAt: null,
      }),
    ).toMatchObject({
      due: false,
      reason: 'not-yet',
    });
    expect(
      reflectionDecision({
        now: MORNING + 2 * 3600_000,
        dayTokens: 10,
        lastReflectedAt: MORNING - DAY,
      }),
    ).toMatchObject({
      due: true,
      reason: 'daily-schedule',
    });
  });

  it('should reflect at most once per day, whatever the tokens', () => {
    expect(
      reflectionDecision({
        now: MORNING + 3600_000,
        dayTokens: 90_000,
        lastReflectedAt: MORNING - 3600_000,
      }),
    ).toMatchObject({ due: false, reason: 'already-reflected-today' });
    expect(
      reflectionDecision({ now: MORNING + DAY, dayTokens: 90_000, lastReflectedAt: MORNING }),
    ).toMatchObject({ due: true });
  });

  it('should key the guard by tenant, project and day', () => {
    expect(reflectionGuardKey('acme', 'acme/api', '2026-02-17')).toBe(
      'reflect:triggered:["acme","acme/api","2026-02-17"]',
    );
  });

  it("should count the tokens of the day's distillations in the segment format", () => {
    const distillations = weekOfDistillations();
    const expected = distillations
      .filter((d) => d.date === '2026-02-16')
      .reduce((sum, d) => sum + estimateTokens(formatDistillation(d)), 0);
    expect(dayTokens(distillations, '2026-02-16')).toBe(expected);
    expect(expected).toBeGreaterThan(0);
    expect(dayTokens(distillations, '2026-02-01')).toBe(0);
  });
});

describe('compressionDecision', () => {
  it('should accept output shorter than the input', () => {
    expect(validateCompression(100, 99)).toBe(true);
    expect(validateCompression(100, 100)).toBe(false);
    expect(compressionDecision(0, 100, 40)).toEqual({ verdict: 'accept' });
  });

  it('should escalate the guidance 0 → 1 → 2, then give up', () => {
    expect(compressionDecision(0, 100, 120)).toEqual({
      verdict: 'retry',
      level: 1,
      guidance: COMPRESSION_GUIDANCE[1],
    });
    expect(compressionDecision(1, 100, 100)).toEqual({
      verdict: 'retry',
      level: 2,
      guidance: COMPRESSION_GUIDANCE[2],
    });
    expect(compressionDecision(2, 100, 101)).toMatchObject({ verdict: 'give-up' });
  });

  it("should carry the seed's three guidance levels", () => {
    expect(COMPRESSION_GUIDANCE[0]).toBe('');
    expect(COMPRESSION_GUIDANCE[1]).toContain('8/10 detail level');
    expect(COMPRESSION_GUIDANCE[2]).toContain('6/10 detail level');
    expect(COMPRESSION_GUIDANCE[2]).toContain('Drop all 🟢 items entirely');
  });
});

describe('applyTemporalGradient', () => {
  it('should condense only distillations older than three days, keeping narratives and 🔴 facts', () => {
    const distillations = weekOfDistillations();
    const graded = applyTemporalGradient(distillations, REFLECT_AT);
    expect(graded.map((g) => g.condensed)).toEqual([false, false, true]);
    const old = graded[2].distillation;
    expect(old.segments[0].narrative).toBe(distillations[2].segments[0].narrative);
    expect(old.segments[0].facts.every((f) => f.priority === '🔴')).toBe(true);
    expect(old.segments[0].facts.length).toBeLessThan(distillations[2].segments[0].facts.length);
    expect(graded[0].distillation).toBe(distillations[0]);
  });

  it('should drop the current task and empty segments when condensing', () => {
    const base = weekOfDistillations()[0];
    const d: Distillation = {
      ...base,
      currentTask: 'Primary: x',
      segments: [
        ...base.segments,
        { episodeId: null, title: null, narrative: null, facts: [], sourceEventIds: [] },
      ],
    };
    const condensed = condense(d);
    expect(condensed.currentTask).toBeNull();
    expect(condensed.segments).toHaveLength(1);
  });
});

describe('sectionOf', () => {
  it.each([
    [{ kind: 'rule' as const, text: 'x' }, 'Hard Rules'],
    [{ kind: 'preference' as const, text: 'x' }, 'User'],
    [{ kind: 'decision' as const, text: 'x' }, 'System Architecture'],
    [{ kind: 'state-change' as const, text: 'x' }, 'System Architecture'],
    [{ kind: 'command-fix' as const, text: 'x' }, 'Patterns'],
    [{ kind: null, text: 'Never run migrations by hand' }, 'Hard Rules'],
    [{ kind: null, text: 'The developer prefers terse answers' }, 'User'],
    [
      { kind: null, text: 'The worker runs from apps/worker with port 8288' },
      'System Architecture',
    ],
    [
      { kind: null, text: 'Bisecting with the smallest failing test found the bug quickly' },
      'Patterns',
    ],
  ])('%o → %s', (fact, section) => {
    expect(sectionOf(fact)).toBe(section);
  });

  it('should read section names loosely', () => {
    expect(sectionNamed('Joel')).toBe('User');
    expect(sectionNamed('hard rules')).toBe('Hard Rules');
    expect(sectionNamed('System Architecture')).toBe('System Architecture');
    expect(sectionNamed('Patterns')).toBe('Patterns');
    expect(sectionNamed('Misc')).toBeNull();
  });
});
