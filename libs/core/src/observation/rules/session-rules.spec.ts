import { describe, expect, it } from 'vitest';
import {
  DAY,
  edit,
  grep,
  inferenceInput,
  read,
  runSession,
  sessionSummary,
  T0,
} from '../testing/observer-fixtures';
import { emptyProjectStats } from '../project-stats';
import type { SessionSummary } from '../session-summary';
import type { ObserverSignal } from '../signals';
import { contextCostRule } from './context-cost.rule';
import { prefetchPatternRule } from './prefetch-pattern.rule';
import { taskCalibrationRule } from './task-calibration.rule';
import { workflowRecipeRule } from './workflow-recipe.rule';

const AUTH = 'src/auth';
/** The scratchpad: one session (of the recorded ones, when the id is theirs) in src/auth. */
const touchingAs = (sessionId: string) =>
  runSession([read(0, 'src/auth/token.ts')], { sessionId }).signals;
const touching = touchingAs('now');

function withSessions(sessions: SessionSummary[], signals: ObserverSignal[] = touching) {
  const stats = emptyProjectStats();
  stats.sessions = sessions;
  return inferenceInput({ signals, stats });
}

function authSession(
  i: number,
  files: string[],
  extra: Partial<SessionSummary> = {},
): SessionSummary {
  return sessionSummary({
    sessionId: `s${i}`,
    endedAt: T0 - i * 1000,
    modules: [AUTH],
    filesAccessed: files,
    ...extra,
  });
}

describe('prefetchPatternRule', () => {
  it('should split files into always (> 80 %) and frequently (> 50 %) at the exact edges', () => {
    const files = (i: number) => [
      'src/auth/token.ts',
      ...(i < 4 ? ['src/auth/session.ts'] : []),
      ...(i < 3 ? ['src/config.ts'] : []),
      ...(i < 2 ? ['README.md'] : []),
    ];
    const sessions = [0, 1, 2, 3, 4].map((i) => authSession(i, files(i)));
    const [candidate] = prefetchPatternRule(withSessions(sessions, touchingAs('s0')));
    // token 5/5 = 100 % → always; session 4/5 = 80 % → frequently (not > 80 %); config 3/5 = 60 %
    // → frequently; README 2/5 = 40 % → neither.
    expect(candidate).toMatchObject({
      memoryType: 'prefetch_pattern',
      signalType: 'file_access',
      frequency: 5,
      facts: {
        module: AUTH,
        alwaysReadFiles: ['src/auth/token.ts'],
        frequentlyReadFiles: ['src/auth/session.ts', 'src/config.ts'],
        sessionCount: 5,
      },
    });
  });

  it('should leave out a file in exactly 50 % of the sessions', () => {
    const sessions = [0, 1, 2, 3].map((i) =>
      authSession(i, ['src/auth/token.ts', ...(i < 2 ? ['src/half.ts'] : [])]),
    );
    const [candidate] = prefetchPatternRule(withSessions(sessions, touchingAs('s0')));
    expect(candidate.facts).toMatchObject({
      alwaysReadFiles: ['src/auth/token.ts'],
      frequentlyReadFiles: [],
    });
  });

  it('should need 3 sessions of the module, counting the scratchpad session not yet recorded', () => {
    const one = [authSession(0, ['src/auth/token.ts'])];
    expect(prefetchPatternRule(withSessions(one))).toEqual([]);
    const two = [...one, authSession(1, ['src/auth/token.ts'])];
    expect(prefetchPatternRule(withSessions(two))[0]?.frequency).toBe(3);
  });
});

describe('contextCostRule', () => {
  it('should give the average and nearest-rank p90 of tokens per session', () => {
    const sessions = [100, 200, 300, 1000].map((tokens, i) =>
      authSession(i, [], { tokensByModule: { [AUTH]: tokens } }),
    );
    expect(contextCostRule(withSessions(sessions))[0]).toMatchObject({
      memoryType: 'context_cost',
      frequency: 4,
      facts: { module: AUTH, averageTokens: 400, p90Tokens: 1000, sampleCount: 4 },
    });
  });

  it('should use only the last 30 sessions and need 3 samples', () => {
    const sessions = Array.from({ length: 31 }, (_, i) =>
      authSession(i, [], { tokensByModule: { [AUTH]: i === 30 ? 1_000_000 : 100 } }),
    );
    expect(contextCostRule(withSessions(sessions))[0].facts).toMatchObject({
      averageTokens: 100,
      p90Tokens: 100,
      sampleCount: 30,
    });
    const two = [0, 1].map((i) => authSession(i, [], { tokensByModule: { [AUTH]: 100 } }));
    expect(contextCostRule(withSessions(two))).toEqual([]);
  });
});

describe('taskCalibrationRule', () => {
  it('should compare actual and planned steps per methodology', () => {
    const sessions = [15, 20, 25].map((steps, i) =>
      authSession(i, [], { stepCount: steps, plannedSteps: 10, methodology: 'native' }),
    );
    expect(taskCalibrationRule(withSessions(sessions))[0]).toMatchObject({
      memoryType: 'task_calibration',
      facts: {
        module: AUTH,
        methodology: 'native',
        averageActualSteps: 20,
        averagePlannedSteps: 10,
        ratio: 2,
        sampleCount: 3,
      },
    });
  });

  it('should need 3 planned sessions of one methodology', () => {
    const sessions = [0, 1, 2].map((i) =>
      authSession(i, [], {
        stepCount: 5,
        plannedSteps: 5,
        methodology: i === 0 ? 'bmad' : 'native',
      }),
    );
    expect(taskCalibrationRule(withSessions(sessions))).toEqual([]);
  });
});

describe('workflowRecipeRule', () => {
  const recipe = [
    grep(0, 'src/ipc/handlers.ts'),
    read(1, 'src/ipc/handlers.ts'),
    edit(2, 'src/ipc/handlers.ts'),
    edit(3, 'src/ipc/channels.ts'),
  ];
  const KEY = 'src/ipc|Grep>Read>Edit>Edit';
  const current = runSession(recipe, { sessionId: 'now', startAt: T0 }).signals;
  const earlier = (i: number, extra: Partial<SessionSummary> = {}) =>
    sessionSummary({ sessionId: `s${i}`, endedAt: T0 - DAY, sequenceKeys: [KEY], ...extra });

  it('should infer a recipe from the same 4-step sequence in 3 successful sessions within 30 days', () => {
    const [candidate] = workflowRecipeRule(withSessions([earlier(1), earlier(2)], current));
    expect(candidate).toMatchObject({
      memoryType: 'workflow_recipe',
      scope: 'global',
      frequency: 3,
      facts: {
        module: 'src/ipc',
        toolSequence: ['Grep', 'Read', 'Edit', 'Edit'],
        steps: [
          { tool: 'Grep', file: 'src/ipc/handlers.ts' },
          { tool: 'Read', file: 'src/ipc/handlers.ts' },
          { tool: 'Edit', file: 'src/ipc/handlers.ts' },
          { tool: 'Edit', file: 'src/ipc/channels.ts' },
        ],
      },
    });
    expect(candidate.evidence.sessionIds).toEqual(['now', 's1', 's2']);
  });

  it('should not count failed, unvalidated or older-than-30-days sessions', () => {
    const old = earlier(2, { endedAt: T0 + DAY - 31 * DAY });
    expect(workflowRecipeRule(withSessions([earlier(1), old], current))).toEqual([]);
    expect(
      workflowRecipeRule(withSessions([earlier(1), earlier(2, { succeeded: false })], current)),
    ).toEqual([]);
    const unvalidated = { ...withSessions([earlier(1), earlier(2)], current), validated: false };
    expect(workflowRecipeRule(unvalidated)).toEqual([]);
  });

  it('should keep only the longest of nested recipes with the same sessions', () => {
    const five = [...recipe, read(4, 'src/ipc/index.ts')];
    const signals = [0, 1, 2].flatMap((i) => runSession(five, { sessionId: `r${i}` }).signals);
    const keys = workflowRecipeRule(withSessions([], signals)).map((c) => c.naturalKey);
    expect(keys).toEqual(['src/ipc|Grep>Read>Edit>Edit>Read']);
  });
});
