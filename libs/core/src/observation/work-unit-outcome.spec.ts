import type { WorkUnitRef } from '@engram/contracts';
import { describe, expect, it } from 'vitest';
import { observerSettings } from './observer-settings';
import { addNote, addSignals, countToolCall, newScratchpad, type Scratchpad } from './scratchpad';
import {
  markPromoted,
  onSubtaskValidated,
  onValidationFailed,
  onValidationPassed,
} from './scratchpad-lifecycle';
import { edit, envelopeOf, read, runSession, subtaskRef, T0 } from './testing/observer-fixtures';
import { workUnitOutcomeFacts, type WorkUnitVerdict } from './work-unit-outcome';
import { workUnitOutcomeMemory, workUnitOutcomeMemoryId } from './work-unit-outcome-memory';

const settings = observerSettings();
const SPEC: WorkUnitRef = {
  methodology: 'native',
  hierarchy: ['spec_042'],
  label: 'Token refresh',
};

function work(pad: Scratchpad, sessionId: string, files: string[], startAt = T0): void {
  const calls = files.flatMap((file, i) => [read(2 * i, file), edit(2 * i + 1, file)]);
  const { signals } = runSession(calls, { sessionId, startAt });
  for (let call = 0; call < calls.length; call += 1) countToolCall(pad);
  addSignals(pad, sessionId, signals, startAt);
}

const passed = (eventId = 'vp', at = T0 + 60_000): WorkUnitVerdict => ({
  type: 'ValidationPassed',
  ...envelopeOf(eventId, 'qa', at),
  workUnitRef: SPEC,
  summary: 'all green',
  issues: [],
});

const failed = (eventId = 'vf', summary: string | null = null): WorkUnitVerdict => ({
  type: 'ValidationFailed',
  ...envelopeOf(eventId, 'qa', T0 + 30_000),
  workUnitRef: SPEC,
  summary,
  issues: [
    {
      severity: 'HIGH',
      description: 'refresh races logout',
      file: null,
      module: null,
      whatWasTried: null,
      recommendation: null,
    },
    {
      severity: 'low',
      description: 'naming',
      file: null,
      module: null,
      whatWasTried: null,
      recommendation: null,
    },
  ],
});

const subtask = (n: number, succeeded: boolean, eventId = `sv-${n}`): WorkUnitVerdict => ({
  type: 'SubtaskValidated',
  ...envelopeOf(eventId, 'coder', T0 + n * 10_000),
  workUnitRef: subtaskRef('spec_042', n),
  succeeded,
  subtaskCount: 8,
});

/** The verdict's outcome, then the verdict applied — the order the observer keeps. */
function judge(pad: Scratchpad, verdict: WorkUnitVerdict) {
  const facts = workUnitOutcomeFacts(pad, verdict);
  switch (verdict.type) {
    case 'ValidationPassed':
      onValidationPassed(pad, verdict, settings);
      break;
    case 'ValidationFailed':
      onValidationFailed(pad, verdict);
      break;
    case 'SubtaskValidated':
      for (const trigger of onSubtaskValidated(pad, verdict, settings)) {
        markPromoted(pad, trigger, 0, settings.moduleDepth);
      }
      break;
  }
  return facts;
}

describe('work unit outcome', () => {
  it('should record a passed work unit: its edits, steps, decisions and earlier failures', () => {
    const pad = newScratchpad(envelopeOf('start', 'coder'), null);
    work(pad, 'coder', ['src/auth/token.ts']);
    expect(judge(pad, failed('vf-1', 'token not refreshed'))?.succeeded).toBe(false);
    work(pad, 'coder', ['src/auth/session.ts', 'src/auth/token.ts'], T0 + 40_000);
    addNote(
      pad,
      {
        ...envelopeOf('note', 'coder', T0 + 41_000),
        text: 'refresh tokens under a mutex',
        memoryType: 'decision',
        relatedFiles: [],
      },
      null,
    );
    const facts = judge(pad, passed())!;
    expect(facts).toMatchObject({
      succeeded: true,
      filesModified: ['src/auth/session.ts', 'src/auth/token.ts'],
      keyDecisions: ['refresh tokens under a mutex'],
      stepsTaken: 4,
      retryCount: 1,
      failureReason: null,
      sessionIds: ['coder', 'qa'],
    });
    const memory = workUnitOutcomeMemory(facts, settings.moduleDepth);
    expect(memory).toMatchObject({
      memoryType: 'work_unit_outcome',
      source: 'observer_inferred',
      scope: 'work_unit',
      workUnitRef: SPEC,
      timestamp: T0 + 60_000,
      createdAt: T0 + 60_000,
      relatedFiles: ['src/auth/session.ts', 'src/auth/token.ts'],
      content:
        'Token refresh (spec_042): succeeded after 4 steps, edited src/auth/session.ts, ' +
        'src/auth/token.ts; 1 retry',
      workUnitOutcome: {
        succeeded: true,
        filesModified: ['src/auth/session.ts', 'src/auth/token.ts'],
        keyDecisions: ['refresh tokens under a mutex'],
        stepsTaken: 4,
        contextTokensUsed: null,
        retryCount: 1,
        failureReason: null,
      },
      deadEnd: null,
      workState: null,
    });
  });

  it('should give a failed validation its reason: QA summary, else the blocking issues', () => {
    const withSummary = newScratchpad(envelopeOf('start', 'coder'), null);
    work(withSummary, 'coder', ['src/auth/token.ts']);
    const facts = judge(withSummary, failed('vf', 'logout leaves the token'))!;
    expect(facts).toMatchObject({ succeeded: false, failureReason: 'logout leaves the token' });
    expect(workUnitOutcomeMemory(facts, 2).content).toBe(
      'Token refresh (spec_042): failed after 2 steps, edited src/auth/token.ts: ' +
        'logout leaves the token',
    );
    const noSummary = newScratchpad(envelopeOf('start', 'coder'), null);
    expect(judge(noSummary, failed('vf', null))?.failureReason).toBe('refresh races logout');
  });

  it('should judge a subtask by its own segment and count its failed attempts', () => {
    const pad = newScratchpad(envelopeOf('start', 'coder'), null);
    work(pad, 'coder', ['src/a.ts']);
    expect(judge(pad, subtask(1, true))).toMatchObject({
      succeeded: true,
      filesModified: ['src/a.ts'],
      retryCount: 0,
    });
    work(pad, 'coder', ['src/b.ts'], T0 + 11_000);
    expect(judge(pad, subtask(2, false, 'sv-2-fail'))).toMatchObject({
      succeeded: false,
      filesModified: ['src/b.ts'],
      failureReason: 'subtask validation failed',
    });
    work(pad, 'coder', ['src/c.ts'], T0 + 21_000);
    const second = judge(pad, subtask(2, true))!;
    expect(second).toMatchObject({ filesModified: ['src/c.ts'], retryCount: 1 });
    expect(second.workUnitRef.hierarchy).toEqual(['spec_042', 'subtask_2']);
  });

  it('should count the edits of subtasks promoted before the final verdict', () => {
    const pad = newScratchpad(envelopeOf('start', 'coder'), null);
    work(pad, 'coder', ['src/a.ts']);
    judge(pad, subtask(1, true)); // 8 subtasks: promoted (digested) at once
    expect(pad.segments[0].status).toBe('promoted');
    work(pad, 'coder', ['src/b.ts'], T0 + 11_000);
    expect(judge(pad, passed())).toMatchObject({
      filesModified: ['src/a.ts', 'src/b.ts'],
      stepsTaken: 4,
    });
  });

  it('should be deterministic: one id per work unit, the same record for the same verdict', () => {
    const build = () => {
      const pad = newScratchpad(envelopeOf('start', 'coder'), null);
      work(pad, 'coder', ['src/auth/token.ts']);
      return workUnitOutcomeMemory(judge(pad, passed())!, 2);
    };
    expect(build()).toEqual(build());
    const failedPad = newScratchpad(envelopeOf('start', 'coder'), null);
    const failure = workUnitOutcomeMemory(judge(failedPad, failed())!, 2);
    expect(failure.memoryId).toBe(build().memoryId);
    expect(failure.memoryId).toBe(
      workUnitOutcomeMemoryId('acme', 'acme/api', { workUnitRef: SPEC }),
    );
    expect(failure.eventId).not.toBe(build().eventId);
    const other = workUnitOutcomeMemoryId('acme', 'acme/api', { workUnitRef: subtaskRef('x', 1) });
    expect(other).not.toBe(failure.memoryId);
    const nested = (hierarchy: string[]) =>
      workUnitOutcomeMemoryId('acme', 'acme/api', {
        workUnitRef: { methodology: 'native', hierarchy, label: '' },
      });
    expect(nested(['x/a', 'b'])).not.toBe(nested(['x', 'a/b']));
  });

  it('should record nothing for a verdict seen before, or without a work unit', () => {
    const pad = newScratchpad(envelopeOf('start', 'coder'), null);
    work(pad, 'coder', ['src/a.ts']);
    expect(judge(pad, passed())).not.toBeNull();
    expect(judge(pad, passed())).toBeNull();
    const anonymous: WorkUnitVerdict = {
      type: 'ValidationPassed',
      ...envelopeOf('vp-2', 'qa'),
      workUnitRef: null,
      summary: null,
      issues: [],
    };
    expect(judge(pad, anonymous)).toBeNull();
  });
});
