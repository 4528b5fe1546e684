import type { QaIssue } from '@engram/contracts';
import { describe, expect, it } from 'vitest';
import { observerSettings } from './observer-settings';
import {
  addCommit,
  addNote,
  addSignals,
  newScratchpad,
  scratchpadIdOf,
  type Scratchpad,
} from './scratchpad';
import {
  expireIdle,
  markPromoted,
  onSessionEnded,
  onSubtaskValidated,
  onValidationFailed,
  onValidationPassed,
  promotableOf,
} from './scratchpad-lifecycle';
import {
  bash,
  DAY,
  edit,
  envelopeOf,
  read,
  ROOT,
  runSession,
  subtaskRef,
  T0,
} from './testing/observer-fixtures';

const settings = observerSettings();
const SPEC = subtaskRef('spec_042', 1);

function specPad(): Scratchpad {
  return newScratchpad(envelopeOf('start'), SPEC);
}

function work(pad: Scratchpad, step: number, file = `src/f${step}.ts`): void {
  const { signals } = runSession([read(step, file)], { sessionId: 's1' });
  addSignals(pad, 's1', signals, T0 + step);
}

function subtask(pad: Scratchpad, n: number, succeeded: boolean, subtaskCount: number | null) {
  return onSubtaskValidated(
    pad,
    {
      ...envelopeOf(`sv-${n}-${String(succeeded)}`),
      workUnitRef: subtaskRef('spec_042', n),
      succeeded,
      subtaskCount,
    },
    settings,
  );
}

const passed = (pad: Scratchpad, issues: QaIssue[] = []) =>
  onValidationPassed(
    pad,
    { ...envelopeOf('vp', 'qa'), workUnitRef: SPEC, summary: null, issues },
    settings,
  );
const failed = (pad: Scratchpad, issues: QaIssue[] = []) =>
  onValidationFailed(pad, { ...envelopeOf('vf', 'qa'), workUnitRef: SPEC, summary: null, issues });
const ended = (pad: Scratchpad, sessionId = 's1') =>
  onSessionEnded(pad, {
    ...envelopeOf(`end-${sessionId}`, sessionId),
    userMessageCount: 3,
    durationS: 60,
    reason: null,
  });

const HIGH: QaIssue = {
  severity: 'high',
  description: 'refresh races logout',
  file: null,
  module: null,
  whatWasTried: null,
  recommendation: null,
};

describe('scratchpad lifecycle', () => {
  it('should key a work unit by its spec root across sessions, and a session without one by itself', () => {
    expect(scratchpadIdOf(envelopeOf('a', 'coder'), subtaskRef('spec_042', 1))).toBe(
      scratchpadIdOf(envelopeOf('b', 'qa'), subtaskRef('spec_042', 7)),
    );
    expect(scratchpadIdOf(envelopeOf('a', 's1'), null)).not.toBe(
      scratchpadIdOf(envelopeOf('a', 's2'), null),
    );
    expect(specPad().workUnitRoot).toEqual({
      methodology: 'native',
      hierarchy: ['spec_042'],
      label: 'spec_042 / 1',
    });
  });

  it('should hold validated subtasks of a spec of 5 subtasks until final QA passes', () => {
    const pad = specPad();
    work(pad, 1);
    expect(subtask(pad, 1, true, 5)).toEqual([]);
    work(pad, 2);
    expect(subtask(pad, 2, true, 5)).toEqual([]);
    const [trigger] = passed(pad);
    expect(trigger).toEqual({
      reason: 'validation_passed',
      validated: true,
      segmentIds: [0, 1],
      consolidate: false,
    });
    expect(
      promotableOf(pad, trigger).signals.map((s) => s.type === 'file_access' && s.filePath),
    ).toEqual(['src/f1.ts', 'src/f2.ts']);
  });

  it('should promote each validated subtask at once when the spec has more than 5 subtasks', () => {
    const pad = specPad();
    work(pad, 1);
    expect(subtask(pad, 1, true, 6)).toEqual([
      { reason: 'subtask_validated', validated: true, segmentIds: [0], consolidate: false },
    ]);
  });

  it('should discard a failed subtask attempt but carry its dead ends to the next promotion', () => {
    const pad = specPad();
    const attempt = runSession([edit(0, 'src/a.ts'), bash(1, 'git checkout src/a.ts')], {
      sessionId: 's1',
    });
    addSignals(pad, 's1', attempt.signals, T0);
    addNote(
      pad,
      { ...envelopeOf('note'), text: 'use the cache', memoryType: null, relatedFiles: [] },
      ROOT,
    );
    expect(subtask(pad, 1, false, 6)).toEqual([]);
    expect(pad.segments[0]).toMatchObject({ status: 'failed', signals: [], notes: [] });
    work(pad, 5);
    const [trigger] = subtask(pad, 1, true, 6);
    expect(promotableOf(pad, trigger).signals.map((s) => s.type)).toEqual([
      'file_access',
      'dead_end',
    ]);
  });

  it('should discard everything unpromoted on ValidationFailed and promote only its critical/high issues', () => {
    const pad = specPad();
    work(pad, 1);
    subtask(pad, 1, true, 3);
    work(pad, 2);
    const [trigger] = failed(pad, [HIGH]);
    expect(trigger).toEqual({
      reason: 'validation_failed',
      validated: true,
      segmentIds: [],
      consolidate: false,
    });
    expect(pad.segments.map((s) => s.status)).toEqual(['failed', 'failed']);
    expect(promotableOf(pad, trigger)).toMatchObject({
      signals: [],
      qaIssues: [expect.objectContaining({ severity: 'high', eventId: 'vf' })],
    });
    const noIssues = specPad();
    expect(failed(noIssues)).toEqual([]);
  });

  it("should promote a session's own scratchpad at SessionEnded as never validated", () => {
    const pad = newScratchpad(envelopeOf('start'), null);
    work(pad, 1);
    expect(ended(pad)).toEqual([
      { reason: 'session_ended', validated: false, segmentIds: [0], consolidate: false },
    ]);
  });

  it('should keep validated and unvalidated segments apart at SessionEnded', () => {
    const pad = newScratchpad(envelopeOf('start'), null);
    work(pad, 1);
    subtask(pad, 1, true, 2);
    work(pad, 2);
    expect(ended(pad).map((t) => [t.validated, t.segmentIds])).toEqual([
      [true, [0]],
      [false, [1]],
    ]);
  });

  it("should let a work unit's scratchpad wait past SessionEnded until it validates or expires", () => {
    const pad = specPad();
    work(pad, 1);
    expect(ended(pad)).toEqual([]);
    expect(expireIdle(pad, T0 + 6 * DAY, settings)).toEqual([]);
    expect(expireIdle(pad, T0 + 8 * DAY, settings)).toEqual([
      { reason: 'expired', validated: false, segmentIds: [0], consolidate: false },
    ]);
  });

  it('should ignore a redelivered lifecycle event', () => {
    const pad = specPad();
    work(pad, 1);
    expect(passed(pad)).toHaveLength(1);
    expect(passed(pad)).toEqual([]);
  });

  it('should digest promoted segments and move the counters on', () => {
    const pad = specPad();
    const { signals } = runSession([edit(0, 'src/a.ts'), edit(1, 'src/a.ts')], { sessionId: 's1' });
    addSignals(pad, 's1', signals, T0);
    const [trigger] = passed(pad, [HIGH]);
    markPromoted(pad, trigger, 3, settings.moduleDepth);
    expect(pad.segments[0]).toMatchObject({
      status: 'promoted',
      signals: [],
      digest: { edits: { 'src/a.ts': 2 }, backtracks: { 'src/a.ts': 1 } },
    });
    expect(pad).toMatchObject({ promotedCount: 3, qaIssues: [] });
  });

  it('should ask for consolidation once a spec of 10+ subtasks passes', () => {
    const pad = specPad();
    for (let n = 1; n <= 10; n += 1) {
      work(pad, n);
      subtask(pad, n, true, 10);
    }
    expect(passed(pad)[0].consolidate).toBe(true);
    const small = specPad();
    work(small, 1);
    subtask(small, 1, true, 9);
    expect(passed(small)[0].consolidate).toBe(false);
  });

  it('should normalise note and commit paths and drop the ones outside the project', () => {
    const pad = specPad();
    addNote(
      pad,
      {
        ...envelopeOf('n'),
        text: 't',
        memoryType: 'gotcha',
        relatedFiles: [`${ROOT}/src/a.ts`, '/etc/hosts'],
      },
      ROOT,
    );
    addCommit(
      pad,
      {
        ...envelopeOf('c'),
        sha: 'abc',
        changedFiles: ['src/a.ts'],
        renamedFiles: [{ from: 'old.ts', to: 'new.ts' }],
        deletedFiles: [],
        message: null,
        branch: null,
      },
      ROOT,
    );
    expect(pad.segments[0].notes[0].relatedFiles).toEqual(['src/a.ts']);
    expect(pad.commits[0]).toMatchObject({ sha: 'abc', files: ['src/a.ts', 'new.ts'] });
  });
});
