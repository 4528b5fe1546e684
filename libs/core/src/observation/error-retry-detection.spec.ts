import { describe, expect, it } from 'vitest';
import { bash, edit, ofType, read, runSession } from './testing/observer-fixtures';

const FAIL = (n: number) => `FAIL src/auth/token.spec.ts:${n} expected 200 got 401`;

describe('error_retry detection', () => {
  it('should group retries of the same normalised error and report the fix when edits resolved it', () => {
    const { signals } = runSession([
      bash(0, 'npm test -- auth', FAIL(10)),
      bash(1, 'npm test -- auth', FAIL(12)),
      edit(2, 'src/auth/token.ts'),
      bash(3, 'npm test -- auth'),
    ]);
    const [retry] = ofType(signals, 'error_retry');
    expect(retry).toMatchObject({
      toolName: 'Bash',
      normalisedError: 'FAIL <path>:<n> expected <n> got <n>',
      occurrences: 2,
      resolution: 'edited_files',
      resolvedHow: 'fixed by editing src/auth/token.ts',
      editedFiles: ['src/auth/token.ts'],
      stepIndex: 3,
      firstInSession: true,
    });
    expect(retry.eventIds).toEqual(['s1-e0', 's1-e1', 's1-e3']);
  });

  it('should tell a changed command from an unchanged retry', () => {
    const changed = runSession([
      bash(0, 'npm test -- auth', 'boom'),
      bash(1, 'npm test -- auth --runInBand'),
    ]);
    expect(ofType(changed.signals, 'error_retry')[0]).toMatchObject({
      resolution: 'changed_arguments',
      resolvedHow: 'succeeded with `npm test -- auth --runInBand`',
    });
    const flaky = runSession([bash(0, 'npm test', 'timeout'), bash(1, 'npm test')]);
    expect(ofType(flaky.signals, 'error_retry')[0].resolution).toBe('retried_unchanged');
  });

  it('should not let a success of another command of the same tool resolve the error', () => {
    const { signals } = runSession([bash(0, 'npm test', 'boom'), bash(1, 'ls -la')]);
    expect(ofType(signals, 'error_retry')).toEqual([]);
  });

  it('should close errors still open at session end as unresolved', () => {
    const { signals } = runSession([bash(0, 'npm run build', 'exit 2'), read(1, 'src/a.ts')], {
      finish: true,
    });
    expect(ofType(signals, 'error_retry')).toEqual([
      expect.objectContaining({
        occurrences: 1,
        resolution: 'unresolved',
        resolvedHow: null,
        eventIds: ['s1-e0'],
      }),
    ]);
  });

  it('should resolve a failed edit when the same file is edited successfully', () => {
    const { signals } = runSession([
      { ...edit(0, 'src/a.ts'), outcome: 'error', errorMessage: 'old_string not found in file' },
      edit(1, 'src/a.ts', 'other', 'text'),
    ]);
    expect(ofType(signals, 'error_retry')[0]).toMatchObject({
      toolName: 'Edit',
      files: ['src/a.ts'],
      resolution: 'changed_arguments',
    });
  });
});
