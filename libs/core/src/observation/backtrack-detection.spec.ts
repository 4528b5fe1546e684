import { describe, expect, it } from 'vitest';
import { bash, edit, ofType, read, runSession } from './testing/observer-fixtures';

describe('backtrack detection', () => {
  it('should flag a re-edit within 5 steps (the seed: edit then re-edit → wrong assumption)', () => {
    const { signals } = runSession([edit(0, 'src/a.ts'), edit(5, 'src/a.ts')]);
    expect(ofType(signals, 'backtrack')).toEqual([
      expect.objectContaining({
        filePath: 'src/a.ts',
        reEditedWithinSteps: 5,
        likelyCause: 'wrong_assumption',
        relatedFiles: [],
      }),
    ]);
  });

  it('should not flag a re-edit 6 steps later, nor two edits in one step', () => {
    expect(
      ofType(runSession([edit(0, 'src/a.ts'), edit(6, 'src/a.ts')]).signals, 'backtrack'),
    ).toEqual([]);
    const sameStep = runSession([
      edit(2, 'src/a.ts'),
      { ...edit(2, 'src/a.ts', 'x', 'y'), eventId: 'b' },
    ]);
    expect(ofType(sameStep.signals, 'backtrack')).toEqual([]);
  });

  it('should name a cascading change and its paired files when other files were edited between', () => {
    const { signals } = runSession([
      edit(0, 'src/a.ts'),
      edit(1, 'src/b.ts'),
      read(2, 'src/c.ts'),
      edit(3, 'src/a.ts'),
    ]);
    expect(ofType(signals, 'backtrack')[0]).toMatchObject({
      likelyCause: 'cascading_change',
      relatedFiles: ['src/b.ts'],
    });
  });

  it('should name missing context when the agent only read other files between the edits', () => {
    const { signals } = runSession([
      edit(0, 'src/a.ts'),
      read(1, 'src/types.ts'),
      edit(2, 'src/a.ts'),
    ]);
    expect(ofType(signals, 'backtrack')[0]).toMatchObject({
      likelyCause: 'missing_context',
      relatedFiles: ['src/types.ts'],
    });
  });

  it('should take a failure between the edits as a wrong assumption', () => {
    const { signals } = runSession([
      edit(0, 'src/a.ts'),
      bash(1, 'npm test', 'boom'),
      read(2, 'src/t.ts'),
      edit(3, 'src/a.ts'),
    ]);
    expect(ofType(signals, 'backtrack')[0].likelyCause).toBe('wrong_assumption');
  });

  it('should mark only the first backtrack of a file in the session', () => {
    const { signals } = runSession([edit(0, 'src/a.ts'), edit(1, 'src/a.ts'), edit(2, 'src/a.ts')]);
    expect(ofType(signals, 'backtrack').map((s) => s.firstInSession)).toEqual([true, false]);
  });
});
