import { describe, expect, it } from 'vitest';
import type { ScratchpadQaIssue } from '../scratchpad-records';
import { inferenceInput, T0 } from '../testing/observer-fixtures';
import { qaFailureRule } from './qa-failure.rule';
import { classifyNote, rememberRequestRule } from './remember-request.rule';
import { INFERENCE_RULES, inferCandidates } from '.';

function issue(severity: string, overrides: Partial<ScratchpadQaIssue> = {}): ScratchpadQaIssue {
  return {
    eventId: `qa-${severity}`,
    sessionId: 'qa-session',
    at: T0,
    workUnitRef: null,
    severity,
    description: 'Token refresh races with logout',
    file: 'src/auth/refresh.ts',
    module: null,
    whatWasTried: 'retry on 401',
    recommendation: 'serialise refresh behind a mutex',
    ...overrides,
  };
}

describe('qaFailureRule', () => {
  it('should turn critical and high QA failures into qa_auto error patterns', () => {
    const candidates = qaFailureRule(
      inferenceInput({
        qaIssues: [
          issue('High'),
          issue('critical', { description: 'Crash on empty cart', file: null }),
          issue('medium'),
          issue('low'),
        ],
      }),
    );
    expect(
      candidates.map((c) => [
        c.memoryType,
        c.source,
        c.signalType,
        c.facts.kind === 'qa_failure' && c.facts.severity,
      ]),
    ).toEqual([
      ['error_pattern', 'qa_auto', 'qa_failure', 'high'],
      ['error_pattern', 'qa_auto', 'qa_failure', 'critical'],
    ]);
    expect(candidates[0]).toMatchObject({
      relatedFiles: ['src/auth/refresh.ts'],
      relatedModules: ['src/auth'],
    });
  });

  it('should merge the same issue reported twice', () => {
    const twice = [
      issue('high'),
      issue('high', { eventId: 'qa-2', description: 'Token refresh races with logout ' }),
    ];
    const candidates = qaFailureRule(inferenceInput({ qaIssues: twice }));
    expect(candidates).toHaveLength(1);
    expect(candidates[0]).toMatchObject({
      frequency: 2,
      evidence: { eventIds: ['qa-2', 'qa-high'] },
    });
  });
});

describe('rememberRequestRule', () => {
  it("should keep the agent's type, classify untyped notes and merge repeats", () => {
    const note = (eventId: string, text: string, memoryType: 'decision' | null = null) => ({
      eventId,
      sessionId: 's1',
      at: T0,
      text,
      memoryType,
      relatedFiles: [],
    });
    const candidates = rememberRequestRule(
      inferenceInput({
        notes: [
          note('n1', 'We use zod for all config validation', 'decision'),
          note('n2', 'Never call refresh() twice: it revokes the session'),
          note('n3', 'never call refresh()  twice: it revokes the session'),
        ],
      }),
    );
    expect(candidates.map((c) => [c.memoryType, c.source, c.frequency, c.scope])).toEqual([
      ['decision', 'agent_explicit', 1, 'global'],
      ['gotcha', 'agent_explicit', 2, 'global'],
    ]);
  });

  it('should classify notes from their wording', () => {
    expect(classifyNote('The build fails when NODE_ENV is unset')).toBe('error_pattern');
    expect(classifyNote('I prefer named exports')).toBe('preference');
    expect(classifyNote('Handlers live in src/ipc')).toBe('pattern');
  });
});

describe('inferCandidates', () => {
  it('should list the rules of the SPEC table', () => {
    expect(INFERENCE_RULES.map((r) => r.name)).toEqual([
      'causal_dependency',
      'module_insight',
      'error_pattern',
      'gotcha',
      'prefetch_pattern',
      'dead_end',
      'context_cost',
      'task_calibration',
      'workflow_recipe',
      'qa_failure',
      'e2e_observation',
      'remember_request',
    ]);
  });

  it('should keep the first candidate of a key proposed twice', () => {
    const input = inferenceInput({ qaIssues: [issue('high')] });
    const twice = inferCandidates(input, [INFERENCE_RULES[9], INFERENCE_RULES[9]]);
    expect(twice).toHaveLength(1);
  });
});
