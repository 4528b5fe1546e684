import type { Memory } from '@engram/contracts';
import { describe, expect, it } from 'vitest';
import { observerSettings } from './observer-settings';
import {
  emptyProjectStats,
  foldSignal,
  recordSessionSummary,
  type ProjectObservationStats,
} from './project-stats';
import { runPromotion } from './promotion/promotion-pipeline';
import { addSignals, newScratchpad } from './scratchpad';
import { markPromoted, onValidationPassed, promotableOf } from './scratchpad-lifecycle';
import { SessionSignalDetector } from './session-signal-detector';
import {
  bash,
  edit,
  envelopeOf,
  read,
  ROOT,
  T0,
  toolCall,
  type CallSpec,
} from './testing/observer-fixtures';

const settings = observerSettings();
const HOUR = 60 * 60 * 1000;

/** A session fixing the auth token refresh: the same shape of work each time. */
const SESSION: CallSpec[] = [
  { ...read(0, `${ROOT}/src/auth/token.ts`), tokensUsed: 1200 },
  { ...edit(1, `${ROOT}/src/auth/session.ts`), tokensUsed: 300 },
  bash(2, 'npm test -- auth', 'FAIL src/auth/token.spec.ts:41 expected 200, got 401'),
  edit(3, 'src/auth/session.ts', 'if (expired)', 'if (expired || revoked)'),
  bash(4, 'npm test -- auth'),
];

/** What the observer service does per session, on the pure core only. */
async function observeSession(index: number, stats: ProjectObservationStats): Promise<Memory[]> {
  const sessionId = `session-${index}`;
  const startAt = T0 + index * HOUR;
  const detector = SessionSignalDetector.start(
    { tenantId: 'acme', projectId: 'acme/api', sessionId },
    ROOT,
    settings,
  );
  const pad = newScratchpad(envelopeOf(`start-${index}`, sessionId, startAt), null);
  for (const spec of SESSION) {
    const { signals } = detector.observe(toolCall(spec, sessionId, startAt));
    for (const signal of signals) foldSignal(stats, signal);
    addSignals(pad, sessionId, signals, startAt + spec.step * 1000);
  }
  const endedAt = startAt + 10_000;
  const [trigger] = onValidationPassed(
    pad,
    {
      ...envelopeOf(`vp-${index}`, sessionId, endedAt),
      workUnitRef: null,
      summary: null,
      issues: [],
    },
    settings,
  );
  recordSessionSummary(
    stats,
    detector.summarise({ endedAt, succeeded: true }),
    settings.maxSessionSummaries,
  );
  const { memories } = await runPromotion(
    {
      tenantId: 'acme',
      projectId: 'acme/api',
      ...promotableOf(pad, trigger),
      stats,
      validated: true,
      now: endedAt,
      settings,
    },
    { complexity: pad.complexity, alreadyPromoted: pad.promotedCount },
    { workUnitRef: null, fallbackSessionId: sessionId },
  );
  markPromoted(pad, trigger, memories.length, settings.moduleDepth);
  return memories;
}

describe('observer core, end to end', () => {
  it('should learn more as the same work recurs across sessions', async () => {
    const stats = emptyProjectStats();
    const bySession: string[][] = [];
    for (let i = 0; i < 3; i += 1) {
      bySession.push((await observeSession(i, stats)).map((m) => m.memoryType).sort());
    }
    expect(bySession).toEqual([
      [],
      ['gotcha'],
      ['causal_dependency', 'context_cost', 'error_pattern', 'gotcha', 'prefetch_pattern'],
    ]);
  });

  it('should describe what it learned with provenance', async () => {
    const stats = emptyProjectStats();
    await observeSession(0, stats);
    await observeSession(1, stats);
    const memories = await observeSession(2, stats);
    const byType = new Map(memories.map((m) => [m.memoryType, m]));
    expect(byType.get('error_pattern')?.content).toBe(
      'Recurring Bash error (3 times): "FAIL <path>:<n> expected <n>, got <n>". Resolved before: fixed by editing src/auth/session.ts.',
    );
    expect(byType.get('causal_dependency')?.content).toBe(
      '`src/auth/session.ts` and `src/auth/token.ts` are worked on together: co-accessed within a few steps in 3 sessions (weight 1.00). `src/auth/token.ts` is usually opened first. When changing one, check the other.',
    );
    expect(byType.get('context_cost')?.contextCost).toEqual({
      module: 'src/auth',
      averageTokensPerSession: 1500,
      p90TokensPerSession: 1500,
      sampleCount: 3,
    });
    expect(byType.get('gotcha')).toMatchObject({
      provenanceSessionIds: ['session-2'],
      sessionId: 'session-2',
      source: 'observer_inferred',
      needsReview: true,
    });
    // Both edits of session.ts (steps 1 and 3) are within 3 steps of the read of token.ts.
    expect(stats.coAccess.pairs['src/auth/session.ts\u0000src/auth/token.ts']).toMatchObject({
      sessionCount: 3,
      rawCount: 6,
    });
  });
});
