import { describe, expect, it } from 'vitest';
import { gitRevertTarget } from './revert-detection';
import { bash, edit, ofType, runSession } from './testing/observer-fixtures';

describe('dead_end detection (full-revert proxy, seed 002 §15 Q3)', () => {
  it('should detect an edit fully reverted with git checkout', () => {
    const { signals } = runSession([
      edit(0, 'src/a.ts'),
      edit(1, 'src/b.ts'),
      bash(2, 'npm test', 'TypeError: x is undefined'),
      bash(3, 'git checkout -- src/a.ts src/b.ts'),
    ]);
    expect(ofType(signals, 'dead_end')).toEqual([
      expect.objectContaining({
        trigger: 'full_revert',
        revertedFiles: ['src/a.ts', 'src/b.ts'],
        approachFiles: ['src/a.ts', 'src/b.ts'],
        approachStartStep: 0,
        stepsSpent: 3,
        revertCommand: 'git checkout -- src/a.ts src/b.ts',
        errorsSeen: ['TypeError: x is undefined'],
      }),
    ]);
  });

  it('should call a revert after 20+ steps an abandoned approach (19 is not)', () => {
    const at = (steps: number) =>
      ofType(
        runSession([edit(0, 'src/a.ts'), bash(steps, 'git restore src/a.ts')]).signals,
        'dead_end',
      )[0].trigger;
    expect(at(20)).toBe('abandoned_after_steps');
    expect(at(19)).toBe('full_revert');
  });

  it('should detect edits that exactly invert the earlier ones', () => {
    const { signals } = runSession([
      edit(0, 'src/a.ts', 'let x = 1', 'let x = 2'),
      edit(1, 'src/a.ts', 'foo()', 'bar()'),
      edit(2, 'src/a.ts', 'bar()', 'foo()'),
      edit(3, 'src/a.ts', 'let x = 2', 'let x = 1'),
    ]);
    expect(ofType(signals, 'dead_end')).toEqual([
      expect.objectContaining({ revertedFiles: ['src/a.ts'], stepsSpent: 3, revertCommand: null }),
    ]);
  });

  it('should not take a partial revert for a full one', () => {
    const undoLast = runSession([
      edit(0, 'src/a.ts', 'a', 'b'),
      edit(1, 'src/a.ts', 'c', 'd'),
      edit(2, 'src/a.ts', 'd', 'c'),
    ]);
    expect(ofType(undoLast.signals, 'dead_end')).toEqual([]);
    const patch = runSession([edit(0, 'src/a.ts'), bash(1, 'git checkout -p src/a.ts')]);
    expect(ofType(patch.signals, 'dead_end')).toEqual([]);
    const staged = runSession([edit(0, 'src/a.ts'), bash(1, 'git restore --staged src/a.ts')]);
    expect(ofType(staged.signals, 'dead_end')).toEqual([]);
  });

  it('should not detect inversion after a whole-file write hid the content', () => {
    const { signals } = runSession([
      edit(0, 'src/a.ts', 'a', 'b'),
      { step: 1, toolName: 'Write', filePaths: ['src/a.ts'], argsJson: '{"content":"x"}' },
      edit(2, 'src/a.ts', 'b', 'a'),
    ]);
    expect(ofType(signals, 'dead_end')).toEqual([]);
  });

  it('should revert only files edited in the session, and every one with reset --hard', () => {
    const none = runSession([bash(0, 'git checkout -- src/a.ts')]);
    expect(ofType(none.signals, 'dead_end')).toEqual([]);
    const all = runSession([
      edit(0, 'src/a.ts'),
      edit(1, 'lib/b.ts'),
      bash(2, 'git reset --hard HEAD'),
    ]);
    expect(ofType(all.signals, 'dead_end')[0].revertedFiles).toEqual(['lib/b.ts', 'src/a.ts']);
  });

  it('should start a new approach after a revert', () => {
    const { signals } = runSession([
      edit(0, 'src/a.ts'),
      bash(1, 'git checkout src/a.ts'),
      edit(5, 'src/a.ts'),
      bash(7, 'git stash'),
    ]);
    expect(ofType(signals, 'dead_end').map((s) => [s.approachStartStep, s.stepsSpent])).toEqual([
      [0, 1],
      [5, 2],
    ]);
  });
});

describe('gitRevertTarget', () => {
  it('should read what a command reverts', () => {
    expect(gitRevertTarget('git checkout -- src/a.ts')).toEqual({
      all: false,
      paths: ['src/a.ts'],
    });
    expect(gitRevertTarget('cd x && git restore .')).toEqual({ all: false, paths: ['.'] });
    expect(gitRevertTarget('git -C /repo reset --hard')).toEqual({ all: true, paths: [] });
    expect(gitRevertTarget('git stash push -- src/a.ts')).toEqual({
      all: false,
      paths: ['src/a.ts'],
    });
    expect(gitRevertTarget('git stash pop')).toBeNull();
    expect(gitRevertTarget('git reset --soft HEAD~1')).toBeNull();
    expect(gitRevertTarget('npm test')).toBeNull();
  });
});
