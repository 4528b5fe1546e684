import { describe, expect, it } from 'vitest';
import {
  BaselineKnowledge,
  meanScores,
  queriesOf,
  scoreQuery,
} from '../../bench/quality/files/protocol';
import type { BenchCall, BenchSession } from '../../bench/quality/files/sessions';
import { callOfStep, projectOfTrajectory, relativePath } from '../../bench/quality/files/swe-agent';

const call = (step: number, files: string[], touches = true): BenchCall => ({
  step,
  promptId: 1,
  toolName: touches ? 'Read' : 'Bash',
  filePaths: files,
  touches,
  outcome: 'ok',
  at: step,
});

const session = (id: string, calls: BenchCall[], queried = true): BenchSession => ({
  dataset: 'test',
  projectId: 'p',
  sessionId: id,
  source: id,
  queried,
  calls,
});

describe('file-prediction protocol', () => {
  const s = session('s', [
    call(0, ['a']),
    call(1, [], false),
    call(2, ['b']),
    call(3, ['a']),
    call(4, ['c']),
  ]);

  it('should ask after each first touch for the files touched later, and the first file of a later session', () => {
    expect(queriesOf(s, false).map((q) => [q.kind, q.file, q.targets, q.afterCall])).toEqual([
      ['online', 'a', ['b', 'c'], 0],
      ['online', 'b', ['a', 'c'], 2],
    ]);
    expect(queriesOf(s, true)[0]).toMatchObject({
      kind: 'next-session',
      file: 'a',
      targets: ['b', 'c'],
      afterCall: -1,
    });
    expect(queriesOf(session('n', s.calls, false), true)).toEqual([]);
  });

  it('should score recall@5, MRR and answered', () => {
    const scores = meanScores([scoreQuery(['x', 'b', 'c'], ['b', 'c']), scoreQuery([], ['b'])]);
    expect(scores).toEqual({
      queries: 2,
      recallAt5: 0.5,
      mrr: 0.25,
      answered: 0.5,
      meanAnswers: 1.5,
    });
  });

  it('should count co-occurrences within the window and rank the most-touched files', () => {
    const knowledge = new BaselineKnowledge(3);
    for (const c of s.calls) knowledge.observe(s, c);
    const t = session('t', [call(0, ['c']), call(9, ['d'])]);
    for (const c of t.calls) knowledge.observe(t, c);
    // a–b twice (steps 0–2 and 2–3), a–c once (3–4); d is 9 steps from c: no pair.
    expect(knowledge.coOccurrence('p', 'a')).toEqual(['b', 'c']);
    expect(knowledge.coOccurrence('p', 'd')).toEqual([]);
    expect(knowledge.mostFrequent('p', 'a')).toEqual(['c', 'b', 'd']);
  });
});

describe('SWE-agent trajectories', () => {
  const step = (action: string, openFile: string | null = null) => ({
    action,
    observation: '',
    openFile,
    workingDir: '/repo',
  });

  it('should read open and create paths relative to the working dir, and edits on the open file', () => {
    expect(callOfStep(step('open "/repo/src/a.py" 12'), null)).toMatchObject({
      filePaths: ['src/a.py'],
      touches: true,
    });
    expect(callOfStep(step('create reproduce.py'), null)).toMatchObject({
      filePaths: ['reproduce.py'],
    });
    expect(
      callOfStep(step('edit 4:4\nfixed\nend_of_edit', '/repo/x.py'), '/repo/src/a.py'),
    ).toMatchObject({
      toolName: 'edit',
      filePaths: ['src/a.py'],
    });
    expect(callOfStep(step('find_file a.py'), null)).toMatchObject({
      filePaths: [],
      touches: false,
    });
    expect(
      callOfStep({ ...step('open missing.py'), observation: 'File missing.py not found' }, null),
    ).toMatchObject({
      touches: false,
      outcome: 'error',
    });
    expect(relativePath('/elsewhere/a.py', '/repo')).toBeNull();
  });

  it('should name projects by repository and leave the ctf puzzles unqueried', () => {
    expect(projectOfTrajectory('trajectories__demonstrations__ctf__crypto__katy.traj')).toEqual({
      projectId: 'ctf/katy',
      queried: false,
    });
    expect(projectOfTrajectory('x__marshmallow-code__marshmallow-1867__y.traj').projectId).toBe(
      'marshmallow-code/marshmallow',
    );
  });
});
