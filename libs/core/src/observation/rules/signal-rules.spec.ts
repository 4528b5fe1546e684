import { describe, expect, it } from 'vitest';
import { observerSettings } from '../observer-settings';
import { emptyProjectStats } from '../project-stats';
import type { ObserverSignal } from '../signals';
import {
  bash,
  edit,
  foldAll,
  inferenceInput,
  read,
  runSession,
  type CallSpec,
} from '../testing/observer-fixtures';
import { causalDependencyRule } from './causal-dependency.rule';
import { deadEndRule } from './dead-end.rule';
import { errorPatternRule } from './error-pattern.rule';
import { gotchaRule } from './gotcha.rule';
import { moduleInsightRule } from './module-insight.rule';

function sessions(count: number, calls: CallSpec[], finish = false): ObserverSignal[] {
  return Array.from(
    { length: count },
    (_, i) => runSession(calls, { sessionId: `s${i}`, finish }).signals,
  ).flat();
}

describe('causalDependencyRule', () => {
  const pair = [read(0, 'src/auth/token.ts'), edit(2, 'src/auth/session.ts')];

  it('should infer a causal dependency from co-access in 3 sessions (seed: A+B within 3 steps in ≥3 sessions)', () => {
    const [candidate] = causalDependencyRule(inferenceInput({ signals: sessions(3, pair) }));
    expect(candidate).toMatchObject({
      memoryType: 'causal_dependency',
      signalType: 'co_access',
      frequency: 3,
      relatedFiles: ['src/auth/session.ts', 'src/auth/token.ts'],
      relatedModules: ['src/auth'],
      facts: { sessionCount: 3, weight: 1, direction: 'b_to_a' },
    });
    expect(candidate.evidence.sessionIds).toEqual(['s0', 's1', 's2']);
  });

  it('should not infer one from 2 sessions', () => {
    expect(causalDependencyRule(inferenceInput({ signals: sessions(2, pair) }))).toEqual([]);
  });

  it('should count earlier sessions from the statistics but propose only pairs of this scratchpad', () => {
    const stats = emptyProjectStats();
    foldAll(stats, sessions(3, [...pair, read(9, 'lib/x.ts'), read(10, 'lib/y.ts')]));
    const current = runSession(pair, { sessionId: 'now' }).signals;
    foldAll(stats, current);
    const candidates = causalDependencyRule(inferenceInput({ signals: current, stats }));
    expect(candidates.map((c) => [c.naturalKey.replace('\u0000', '+'), c.frequency])).toEqual([
      ['src/auth/session.ts+src/auth/token.ts', 4],
    ]);
  });
});

describe('moduleInsightRule', () => {
  it('should infer a module insight from a file read 4 times without an edit', () => {
    const signals = runSession([0, 1, 2, 3].map((s) => read(s, 'src/billing/invoice.ts'))).signals;
    const candidates = moduleInsightRule(inferenceInput({ signals }));
    expect(candidates).toHaveLength(1);
    expect(candidates[0]).toMatchObject({
      memoryType: 'module_insight',
      naturalKey: 'src/billing/invoice.ts',
      signalType: 'time_anomaly',
      frequency: 1,
      facts: { readCount: 4, module: 'src/billing' },
    });
  });

  it('should not infer one below the configured read threshold', () => {
    const signals = runSession([0, 1, 2, 3].map((s) => read(s, 'src/a.ts'))).signals;
    const settings = observerSettings({ timeAnomalyReads: 5 });
    expect(moduleInsightRule(inferenceInput({ signals, settings }))).toEqual([]);
  });
});

describe('errorPatternRule', () => {
  const twice = [
    bash(0, 'npm run build', 'TS2307: Cannot find module ./x'),
    bash(1, 'npm run build', 'TS2307: Cannot find module ./y'),
    edit(2, 'tsconfig.json'),
    bash(3, 'npm run build'),
  ];

  it('should infer an error pattern from the same error 3 times, with its resolution', () => {
    const signals = [
      ...runSession(twice, { sessionId: 'a' }).signals,
      ...runSession(twice.slice(0, 1), { sessionId: 'b', finish: true }).signals,
    ];
    const [candidate] = errorPatternRule(inferenceInput({ signals }));
    expect(candidate).toMatchObject({
      memoryType: 'error_pattern',
      frequency: 3,
      relatedFiles: ['tsconfig.json'],
      facts: {
        toolName: 'Bash',
        normalisedError: 'TS2307: Cannot find module <path>',
        occurrences: 3,
        resolutions: ['fixed by editing tsconfig.json'],
      },
    });
  });

  it('should not infer one from 2 occurrences', () => {
    expect(errorPatternRule(inferenceInput({ signals: runSession(twice).signals }))).toEqual([]);
  });
});

describe('gotchaRule', () => {
  it('should infer a gotcha from an edit re-edited within 5 steps, counting project occurrences', () => {
    const signals = sessions(2, [edit(0, 'src/db/schema.ts'), edit(3, 'src/db/schema.ts')]);
    expect(gotchaRule(inferenceInput({ signals }))[0]).toMatchObject({
      memoryType: 'gotcha',
      signalType: 'backtrack',
      frequency: 2,
      facts: {
        filePath: 'src/db/schema.ts',
        withinSteps: 3,
        causes: { wrong_assumption: 2 },
        pairedFiles: [],
      },
    });
  });

  it('should name the paired files of a cascading change (seed: gotcha with relatedFiles)', () => {
    const signals = runSession([
      edit(0, 'src/db/schema.ts'),
      edit(1, 'src/db/migrations/001.sql'),
      edit(2, 'src/db/schema.ts'),
    ]).signals;
    expect(gotchaRule(inferenceInput({ signals }))[0]).toMatchObject({
      relatedFiles: ['src/db/schema.ts', 'src/db/migrations/001.sql'],
      facts: { pairedFiles: ['src/db/migrations/001.sql'], causes: { cascading_change: 1 } },
    });
  });

  it('should ignore backtracks beyond the configured window', () => {
    const signals = runSession([edit(0, 'a.ts'), edit(5, 'a.ts')]).signals;
    expect(
      gotchaRule(
        inferenceInput({ signals, settings: observerSettings({ backtrackWindowSteps: 4 }) }),
      ),
    ).toEqual([]);
  });
});

describe('deadEndRule', () => {
  it('should infer a dead end from a full revert, with what was done instead', () => {
    const signals = runSession([
      edit(0, 'src/cache/redis.ts'),
      bash(1, 'npm test', 'ECONNREFUSED 127.0.0.1:6379'),
      bash(2, 'git checkout -- src/cache/redis.ts'),
      edit(3, 'src/cache/memory.ts'),
    ]).signals;
    const candidates = deadEndRule(inferenceInput({ signals }));
    expect(candidates).toHaveLength(1);
    expect(candidates[0]).toMatchObject({
      memoryType: 'dead_end',
      signalType: 'dead_end',
      frequency: 1,
      relatedFiles: ['src/cache/redis.ts'],
      facts: {
        trigger: 'full_revert',
        revertedFiles: ['src/cache/redis.ts'],
        errorsSeen: ['ECONNREFUSED <n>:<n>'],
        alternativeFiles: ['src/cache/memory.ts'],
      },
    });
  });
});
