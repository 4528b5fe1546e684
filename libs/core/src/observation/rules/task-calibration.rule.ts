import type { MemoryCandidate } from '../candidates';
import { groupBy } from '../candidates';
import type { SessionSummary } from '../session-summary';
import type { InferenceInput } from './inference-input';
import { mean, sessionsTouching, touchedModules } from './rule-helpers';

/**
 * A session's actual steps in the unit of its plan: the steps of its latest plan when the plan
 * came from the agent's todo list (items, not tool calls), else its tool calls.
 */
function actualSteps(session: SessionSummary): number {
  return session.latestPlanSteps ?? session.stepCount;
}

/**
 * Actual vs planned steps of the sessions of a module, per methodology (calibration is
 * methodology-specific, seed 002 §4) → task_calibration, once `taskCalibrationMinSessions` (3)
 * sessions have a plan. Ratio > 1: the module's work is consistently underestimated.
 */
export function taskCalibrationRule(input: InferenceInput): MemoryCandidate[] {
  const { settings } = input;
  const candidates: MemoryCandidate[] = [];
  for (const module of touchedModules(input)) {
    const planned = sessionsTouching(input, module, settings.moduleWindowSessions).filter(
      (s) => s.plannedSteps !== null && s.plannedSteps > 0 && s.stepCount > 0,
    );
    for (const [methodology, samples] of groupBy(planned, (s) => s.methodology ?? 'unknown')) {
      if (samples.length < settings.taskCalibrationMinSessions) continue;
      const averageActualSteps = mean(samples.map(actualSteps));
      const averagePlannedSteps = mean(samples.map((s) => s.plannedSteps ?? 0));
      const naturalKey = `${module}\u0000${methodology}`;
      candidates.push({
        key: `task_calibration:${naturalKey}`,
        memoryType: 'task_calibration',
        naturalKey,
        rule: 'task_calibration',
        signalType: 'session_stats',
        source: 'observer_inferred',
        scope: 'module',
        frequency: samples.length,
        lastObservedAt: Math.max(...samples.map((s) => s.endedAt)),
        relatedFiles: [],
        relatedModules: [module],
        evidence: {
          sessionIds: samples.map((s) => s.sessionId).sort(),
          eventIds: [],
          latest: { sessionId: samples[0].sessionId, promptId: null, at: samples[0].endedAt },
        },
        facts: {
          kind: 'task_calibration',
          module,
          methodology,
          averageActualSteps,
          averagePlannedSteps,
          ratio: averageActualSteps / averagePlannedSteps,
          sampleCount: samples.length,
        },
      });
    }
  }
  return candidates;
}
