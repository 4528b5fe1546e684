import { describe, expect, it } from 'vitest';
import type { ToolEntry } from '../transcript';
import { commandWords, errorFacts, similarCommands } from './errors';

let step = 0;
function tool(partial: Partial<ToolEntry>): ToolEntry {
  step += 1;
  return {
    kind: 'tool',
    eventId: `t${step}`,
    timestamp: Date.UTC(2026, 1, 16, 10, step),
    time: `10:${String(step).padStart(2, '0')}`,
    promptId: 1,
    stepIndex: step,
    toolName: 'Bash',
    activity: 'execute',
    filePaths: [],
    command: null,
    outcome: 'ok',
    errorMessage: null,
    ...partial,
  };
}

describe('errorFacts', () => {
  it('should resolve a failure by the edits made before the same command passed', () => {
    step = 0;
    const facts = errorFacts([
      tool({
        command: 'npm run build',
        outcome: 'error',
        errorMessage: 'error TS2345: wrong type\nmore lines',
      }),
      tool({
        command: 'npm run build',
        outcome: 'error',
        errorMessage: 'error TS2345: wrong type',
      }),
      tool({ toolName: 'Edit', filePaths: ['src/a.ts'] }),
      tool({ toolName: 'Read', activity: 'investigate', filePaths: ['src/b.ts'] }),
      tool({ command: 'npm run build' }),
    ]);
    expect(facts).toEqual([
      {
        priority: '🔴',
        time: '10:05',
        at: Date.UTC(2026, 1, 16, 10, 5),
        text: '`npm run build` failed with "error TS2345: wrong type" (2 failed runs); fixed by editing src/a.ts, after which it passed',
        kind: 'error-resolution',
        sourceEventIds: ['t1', 't2', 't3', 't5'],
        relatedFiles: ['src/a.ts'],
      },
    ]);
  });

  it('should report failures still open at the end as 🟡 and ignore failed non-command tools', () => {
    step = 0;
    const facts = errorFacts([
      tool({
        toolName: 'Edit',
        filePaths: ['src/a.ts'],
        outcome: 'error',
        errorMessage: 'old_string not found',
      }),
      tool({ command: 'cargo test', outcome: 'error', errorMessage: null }),
    ]);
    expect(facts.map((f) => [f.priority, f.kind, f.text])).toEqual([
      ['🟡', 'error-unresolved', '`cargo test` still failing'],
    ]);
  });

  it('should not pair unrelated commands', () => {
    step = 0;
    const facts = errorFacts([
      tool({ command: 'git push', outcome: 'error', errorMessage: 'rejected' }),
      tool({ command: 'git status' }),
    ]);
    expect(facts.map((f) => f.kind)).toEqual(['error-unresolved']);
  });
});

describe('similarCommands', () => {
  it.each([
    ['npm test', 'npx vitest run', true],
    ['npm run build', 'npx tsc -p tsconfig.build.json', true],
    ['cd /repo && npm run lint', 'cd /repo && npm test', false],
    ['git commit -m x', 'git status', false],
    ['npm run lint', 'npm run test', false],
    ['docker compose up -d db', 'docker compose up db', true],
  ])('%s ~ %s → %s', (a, b, expected) => {
    expect(similarCommands(a, b)).toBe(expected);
  });

  it('should drop runners, flags, env and cd steps from the words', () => {
    expect([
      ...commandWords('cd /w && NODE_ENV=test npx vitest run --reporter dot src/auth'),
    ]).toEqual(['vitest', 'test', 'dot', 'src', 'auth']);
  });
});
