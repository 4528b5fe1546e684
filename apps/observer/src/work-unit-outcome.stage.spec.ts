import type { LifecycleEvent, Memory, Typed, WorkUnitRef } from '@engram/contracts';
import type { AnyStageOutput, StageOutput } from '@engram/core';
import { describe, expect, it } from 'vitest';
import { DEFAULT_OBSERVER_TOPICS } from './observer.stage';
import {
  ACME,
  bash,
  edit,
  read,
  sessionCalls,
  T0,
  validationPassed,
} from './testing/observer-events';
import { delivered, harness } from './testing/observer-stage-harness';

const SPEC: WorkUnitRef = { methodology: 'native', hierarchy: ['spec_7'], label: 'Token refresh' };
const A = 'src/auth/token.ts';
const B = 'src/auth/session.ts';
/** s1's work on the spec: 4 calls, edits of A and B, a failing test run. */
const WORK = sessionCalls(ACME, 's1', [read(A), edit(A), edit(B), bash('npm test', 'FAIL 1')]);

const passed = (at = T0 + 60_000): Typed<'ValidationPassed'> => ({
  ...validationPassed(ACME, 's1', at),
  workUnitRef: SPEC,
});

const failed = (summary: string, at = T0 + 30_000): Typed<'ValidationFailed'> => ({
  ...validationPassed(ACME, 's1', at),
  type: 'ValidationFailed',
  eventId: `s1:failed:${at}`,
  workUnitRef: SPEC,
  summary,
  issues: [],
});

const subtask = (n: number, succeeded: boolean): Typed<'SubtaskValidated'> => ({
  ...validationPassed(ACME, 's1', T0 + 10_000 * n),
  type: 'SubtaskValidated',
  eventId: `s1:subtask:${n}:${String(succeeded)}`,
  workUnitRef: { methodology: 'native', hierarchy: ['spec_7', `st_${n}`], label: `Subtask ${n}` },
  succeeded,
  subtaskCount: 3,
});

/** The work_unit_outcome memories a transaction writes. */
function outcomesOf(outputs: AnyStageOutput[]): Memory[] {
  const memories = outputs.filter(
    (output): output is StageOutput<Typed<'Memory'>> =>
      'codec' in output && output.codec.topic === DEFAULT_OBSERVER_TOPICS.memories,
  );
  expect(memories).toHaveLength(1);
  return memories[0].events.map(({ type: _type, ...memory }) => memory);
}

/** Tool calls, then the verdicts: each transaction's outcome memories, in order. */
async function run(verdicts: LifecycleEvent[], log = new Map<string, Buffer>()) {
  const h = harness(log);
  const written: Memory[] = [];
  const tools = await h.stage.toolCallStage.transform(delivered(WORK));
  written.push(...outcomesOf(tools));
  h.commit(tools);
  const lifecycle = await h.stage.lifecycleStage.transform(delivered(verdicts));
  written.push(...outcomesOf(lifecycle));
  h.commit(lifecycle);
  return { ...h, written };
}

describe('ObserverStage: work unit outcomes', () => {
  it('should write one work_unit_outcome per validation, with what the session did', async () => {
    const { written, stage } = await run([passed()]);
    expect(written).toHaveLength(1);
    expect(written[0]).toMatchObject({
      memoryType: 'work_unit_outcome',
      source: 'observer_inferred',
      scope: 'work_unit',
      workUnitRef: SPEC,
      sessionId: 's1',
      timestamp: T0 + 60_000,
      relatedFiles: [B, A],
      content: `Token refresh (spec_7): succeeded after 4 steps, edited ${B}, ${A}`,
      workUnitOutcome: { succeeded: true, filesModified: [B, A], stepsTaken: 4, retryCount: 0 },
    });
    expect(stage.counters.workUnitOutcomes).toBe(1);
  });

  it('should write the same memory whether the verdict is read before or after its tool calls', async () => {
    const { written: callsFirst } = await run([passed()]);
    // The lifecycle partition is read first: the verdict waits for the session's 4 tool calls.
    const h = harness(new Map(), { endOffset: () => Promise.resolve(WORK.length) });
    const early = await h.stage.lifecycleStage.transform(delivered([passed()]));
    expect(outcomesOf(early)).toEqual([]);
    h.commit(early);
    const calls = await h.stage.toolCallStage.transform(delivered(WORK));
    expect(outcomesOf(calls)).toEqual(callsFirst);
  });

  it('should write nothing for a verdict delivered again, and the same memory on a replay', async () => {
    const first = await run([passed()]);
    const again = await first.stage.lifecycleStage.transform(delivered([passed()], 1));
    expect(outcomesOf(again)).toEqual([]);
    const replay = await run([passed()]);
    expect(replay.written).toEqual(first.written);
  });

  it('should redo an aborted transaction with the same memory', async () => {
    const { stage, commit } = harness();
    commit(await stage.toolCallStage.transform(delivered(WORK)));
    const before = outcomesOf(await stage.lifecycleStage.transform(delivered([passed()])));
    stage.aborted();
    const redo = outcomesOf(await stage.lifecycleStage.transform(delivered([passed()])));
    expect(redo).toEqual(before);
    expect(redo).toHaveLength(1);
  });

  it('should replace a failed outcome by the later pass of the same work unit', async () => {
    const { written } = await run([failed('refresh races logout; key sk-abc123 leaked')]);
    expect(written[0]).toMatchObject({
      workUnitOutcome: {
        succeeded: false,
        failureReason: 'refresh races logout; key [REDACTED] leaked',
      },
    });
    const both = await run([failed('refresh races logout'), passed()]);
    // One transaction, one memory per work unit: the later verdict's.
    expect(both.written).toHaveLength(1);
    expect(both.written[0]).toMatchObject({
      memoryId: written[0].memoryId,
      content: 'Token refresh (spec_7): succeeded after 0 steps; 1 retry',
      workUnitOutcome: { succeeded: true, retryCount: 1, failureReason: null },
    });
  });

  it('should write a subtask its own outcome, and none for a validation without a work unit', async () => {
    const { written } = await run([subtask(1, true), validationPassed(ACME, 's1', T0 + 90_000)]);
    expect(written).toHaveLength(1);
    expect(written[0]).toMatchObject({
      workUnitRef: { hierarchy: ['spec_7', 'st_1'] },
      content: `Subtask 1 (spec_7/st_1): succeeded after 4 steps, edited ${B}, ${A}`,
    });
  });
});
