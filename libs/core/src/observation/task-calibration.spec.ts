import { describe, expect, it } from 'vitest';
import { emptyProjectStats } from './project-stats';
import { taskCalibrationRule } from './rules/task-calibration.rule';
import type { SessionSummary } from './session-summary';
import { SessionSignalDetector } from './session-signal-detector';
import {
  edit,
  inferenceInput,
  read,
  runSession,
  T0,
  toolCall,
  type CallSpec,
} from './testing/observer-fixtures';

/** A TodoWrite call writing a plan of `steps` items (the hook's `plannedSteps`). */
const todoWrite = (step: number, steps: number): CallSpec => ({
  step,
  toolName: 'TodoWrite',
  argsJson: '{"todos":[]}',
  plannedSteps: steps,
});

/** A session in src/auth that planned `planned` steps and ended with a plan of `latest`. */
function plannedSession(sessionId: string, planned: number, latest: number): SessionSummary {
  const calls: CallSpec[] = [todoWrite(0, planned), read(1, 'src/auth/token.ts')];
  if (latest !== planned) calls.push(todoWrite(2, latest));
  calls.push(edit(3, 'src/auth/token.ts'));
  const { detector } = runSession(calls, { sessionId });
  return detector.summarise({ endedAt: T0, succeeded: true });
}

function calibration(sessions: SessionSummary[]) {
  const stats = emptyProjectStats();
  stats.sessions = sessions;
  // The rule looks at the modules the promoted scratchpad touched: here src/auth.
  const touching = runSession([read(0, 'src/auth/token.ts')], { sessionId: 'now' }).signals;
  return taskCalibrationRule(inferenceInput({ signals: touching, stats }));
}

describe('planned steps from the agent plan (issue #20)', () => {
  it("should keep the first plan as planned and the latest as the work's actual size", () => {
    expect(plannedSession('s1', 3, 5)).toMatchObject({
      stepCount: 4,
      plannedSteps: 3,
      latestPlanSteps: 5,
      modules: ['src/auth'],
    });
  });

  it('should have no plan for a session that wrote none (and ignore empty plans)', () => {
    const { detector } = runSession([read(0, 'src/a.ts'), todoWrite(1, 0)]);
    expect(detector.summarise({ endedAt: T0, succeeded: true })).toMatchObject({
      plannedSteps: null,
      latestPlanSteps: null,
    });
  });

  it('should keep the plan across a snapshot and a restore, and restore older states without one', () => {
    const { detector } = runSession([todoWrite(0, 4), todoWrite(1, 6)]);
    const restored = SessionSignalDetector.restore(detector.snapshot(), inferenceInput().settings);
    expect(restored.summarise({ endedAt: T0, succeeded: null })).toMatchObject({
      plannedSteps: 4,
      latestPlanSteps: 6,
    });
    const { plan: _plan, ...older } = detector.snapshot();
    const old = SessionSignalDetector.restore(older, inferenceInput().settings);
    old.observe(toolCall(todoWrite(2, 2)));
    expect(old.summarise({ endedAt: T0, succeeded: null }).plannedSteps).toBe(2);
  });
});

describe('task_calibration from planned sessions', () => {
  it('should fire once three sessions of a module had a plan, comparing plan sizes', () => {
    const memories = calibration([
      plannedSession('a', 4, 6),
      plannedSession('b', 4, 4),
      plannedSession('c', 4, 8),
    ]);
    expect(memories).toHaveLength(1);
    expect(memories[0].facts).toEqual({
      kind: 'task_calibration',
      module: 'src/auth',
      methodology: 'unknown',
      averageActualSteps: 6,
      averagePlannedSteps: 4,
      ratio: 1.5,
      sampleCount: 3,
    });
  });

  it('should not fire without plans, or with fewer than three planned sessions', () => {
    const unplanned = ['a', 'b', 'c'].map(
      (id) => runSession([read(0, 'src/auth/token.ts')], { sessionId: id }).detector,
    );
    expect(
      calibration(unplanned.map((d) => d.summarise({ endedAt: T0, succeeded: true }))),
    ).toEqual([]);
    expect(calibration([plannedSession('a', 4, 6), plannedSession('b', 4, 6)])).toEqual([]);
  });
});

describe('planned steps an orchestrator told (TaskClassified, issue #20)', () => {
  /** A session in src/auth whose task an orchestrator planned at `planned` steps. */
  function orchestratedSession(sessionId: string, planned: number, calls: CallSpec[] = []) {
    const { detector } = runSession(
      [read(0, 'src/auth/token.ts'), ...calls, edit(9, 'src/auth/token.ts')],
      { sessionId },
    );
    detector.noteOrchestratorPlan(planned);
    return detector.summarise({ endedAt: T0, succeeded: true });
  }

  it('should count a session with no plan tool call, its tool calls being the actual steps', () => {
    expect(orchestratedSession('o1', 2)).toMatchObject({
      plannedSteps: 2,
      latestPlanSteps: null,
      stepCount: 2,
    });
    const memories = calibration(['o1', 'o2', 'o3'].map((id) => orchestratedSession(id, 4)));
    expect(memories.map((m) => m.facts)).toMatchObject([
      { averagePlannedSteps: 4, averageActualSteps: 2, ratio: 0.5, sampleCount: 3 },
    ]);
  });

  it("should prefer the orchestrator's figure to the agent's first todo list", () => {
    const summary = orchestratedSession('o1', 5, [todoWrite(1, 3), todoWrite(2, 7)]);
    expect(summary).toMatchObject({ plannedSteps: 5, latestPlanSteps: 7 });
  });

  it('should ignore a figure that is no step count, and keep it across a restore', () => {
    const { detector } = runSession([todoWrite(0, 3)]);
    detector.noteOrchestratorPlan(null);
    detector.noteOrchestratorPlan(0);
    detector.noteOrchestratorPlan(2.5);
    expect(detector.summarise({ endedAt: T0, succeeded: null }).plannedSteps).toBe(3);
    detector.noteOrchestratorPlan(6);
    const restored = SessionSignalDetector.restore(detector.snapshot(), inferenceInput().settings);
    expect(restored.summarise({ endedAt: T0, succeeded: null }).plannedSteps).toBe(6);
  });
});
