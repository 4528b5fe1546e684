import { describe, expect, it } from 'vitest';
import { emptyProjectStats, recordSessionSummary } from './project-stats';
import type { SessionSummary } from './session-summary';
import { bash, edit, foldAll, runSession } from './testing/observer-fixtures';

function summary(sessionId: string, endedAt: number): SessionSummary {
  return {
    sessionId,
    startedAt: 0,
    endedAt,
    succeeded: true,
    stepCount: 1,
    plannedSteps: null,
    methodology: null,
    filesAccessed: [],
    filesEdited: [],
    modules: [],
    tokensByModule: {},
    totalTokens: 0,
    sequenceKeys: [],
  };
}

describe('project statistics', () => {
  it('should count error occurrences, sessions and resolutions across sessions', () => {
    const stats = emptyProjectStats();
    const failing = [
      bash(0, 'npm test', 'boom 1'),
      bash(1, 'npm test', 'boom 2'),
      bash(2, 'npm test'),
    ];
    foldAll(stats, runSession(failing, { sessionId: 's1' }).signals);
    foldAll(stats, runSession(failing.slice(0, 1), { sessionId: 's2', finish: true }).signals);
    const [stat] = Object.values(stats.errors);
    expect(stat).toMatchObject({
      toolName: 'Bash',
      normalisedError: 'boom <n>',
      occurrences: 3,
      sessionCount: 2,
      resolutions: { 'succeeded when retried unchanged (flaky or timing-dependent)': 1 },
    });
  });

  it('should count backtracks per file with their causes', () => {
    const stats = emptyProjectStats();
    foldAll(
      stats,
      runSession([edit(0, 'a.ts'), edit(1, 'a.ts'), edit(2, 'a.ts')], { sessionId: 's1' }).signals,
    );
    foldAll(
      stats,
      runSession([edit(0, 'a.ts'), edit(1, 'b.ts'), edit(2, 'a.ts')], { sessionId: 's2' }).signals,
    );
    expect(stats.backtracks['a.ts']).toMatchObject({
      occurrences: 3,
      sessionCount: 2,
      causes: { wrong_assumption: 2, cascading_change: 1 },
    });
  });

  it('should keep the newest session summaries, replacing a re-recorded one', () => {
    const stats = emptyProjectStats();
    recordSessionSummary(stats, summary('a', 30), 2);
    recordSessionSummary(stats, summary('b', 10), 2);
    recordSessionSummary(stats, summary('c', 20), 2);
    recordSessionSummary(stats, summary('c', 40), 2);
    expect(stats.sessions.map((s) => [s.sessionId, s.endedAt])).toEqual([
      ['a', 30],
      ['c', 40],
    ]);
  });
});
