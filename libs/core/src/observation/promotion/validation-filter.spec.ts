import { describe, expect, it } from 'vitest';
import { bash, edit, read, runSession } from '../testing/observer-fixtures';
import { filterAbandonedApproaches } from './validation-filter';

describe('filterAbandonedApproaches', () => {
  it('should drop the signals of a reverted approach and keep its dead end and the rest', () => {
    const { signals } = runSession([
      read(0, 'src/keep.ts'),
      edit(1, 'src/a.ts'),
      edit(2, 'src/a.ts'),
      bash(3, 'npm test', 'boom'),
      bash(4, 'npm test', 'boom'),
      bash(5, 'git checkout src/a.ts'),
      read(6, 'src/keep.ts'),
      edit(7, 'src/b.ts'),
      bash(8, 'npm test', 'boom'),
      bash(9, 'npm test', 'boom'),
      bash(10, 'npm test'),
    ]);
    const { kept, discarded } = filterAbandonedApproaches(signals);
    expect(discarded.map((s) => `${s.type}@${s.stepIndex}`)).toEqual([
      'file_access@1',
      'co_access@1',
      'file_access@2',
      'co_access@2',
      'backtrack@2',
    ]);
    // keep.ts was co-accessed with a.ts inside the approach; its own accesses stay.
    expect(kept.filter((s) => s.type === 'file_access').map((s) => s.stepIndex)).toEqual([0, 6, 7]);
    expect(kept.map((s) => s.type)).toContain('dead_end');
    expect(kept.filter((s) => s.type === 'error_retry').map((s) => s.stepIndex)).toEqual([10]);
  });

  it('should drop errors of the approach span even when they name no file', () => {
    const { signals } = runSession([
      edit(0, 'src/a.ts'),
      bash(1, 'npm test', 'boom'),
      bash(2, 'npm test --bail'),
      bash(3, 'git checkout src/a.ts'),
    ]);
    const { discarded } = filterAbandonedApproaches(signals);
    expect(discarded.map((s) => s.type)).toEqual(['file_access', 'error_retry']);
  });

  it('should keep signals of other sessions', () => {
    const reverted = runSession([edit(0, 'src/a.ts'), bash(1, 'git checkout src/a.ts')], {
      sessionId: 'x',
    }).signals;
    const other = runSession([edit(0, 'src/a.ts')], { sessionId: 'y' }).signals;
    expect(filterAbandonedApproaches([...reverted, ...other]).kept).toEqual(
      expect.arrayContaining(other),
    );
  });
});
