import { describe, expect, it } from 'vitest';
import { normaliseErrorMessage } from '../observation/error-normalisation';
import { DEFAULT_FRICTION_SETTINGS, type FrictionSettings } from './friction-settings';
import { detectRecurringFailures, type FailurePatternRow } from './recurring-failures';
import { CorrectionClusters, userCorrectionOf, type CorrectionRow } from './repeated-corrections';
import { detectStaleInjections, type StaleMemoryRow } from './stale-memories';
import { detectRetryLoops, type RetryLoopRow } from './tool-misuse';

const settings: FrictionSettings = { ...DEFAULT_FRICTION_SETTINGS, minSessionsPerFinding: 3 };
const DAY = 86_400_000;
const T0 = Date.UTC(2026, 10, 20, 9);

function failure(overrides: Partial<FailurePatternRow>): FailurePatternRow {
  return {
    tenantId: 'acme',
    projectId: 'acme/api',
    toolName: 'Bash',
    normalisedError: normaliseErrorMessage('Error: connect ECONNREFUSED 127.0.0.1:5432'),
    sampleMessage: 'Error: connect ECONNREFUSED 127.0.0.1:5432',
    sampleCommand: 'npm run migrate',
    sessions: 1,
    occurrences: 2,
    durationMs: 60_000,
    tokens: 0,
    firstAt: T0,
    lastAt: T0 + DAY,
    sessionIds: ['s-1'],
    eventIds: ['e-1', 'e-2'],
    agentIds: ['claude-code'],
    ...overrides,
  };
}

describe('detectRecurringFailures', () => {
  it('should cluster one error pattern across the projects of a tenant once it reaches the sessions threshold', () => {
    const rows = [
      failure({ projectId: 'acme/api', sessions: 2, sessionIds: ['s-1', 's-2'] }),
      failure({ projectId: 'acme/web', sessions: 1, sessionIds: ['s-9'], eventIds: ['e-9'] }),
    ];
    const [finding, ...rest] = detectRecurringFailures(rows, settings);
    expect(rest).toEqual([]);
    expect(finding).toMatchObject({
      kind: 'recurring-failure',
      sessions: 3,
      projectIds: ['acme/api', 'acme/web'],
      evidence: { sessionIds: ['s-1', 's-2', 's-9'], eventIds: ['e-1', 'e-2', 'e-9'] },
    });
    expect(finding.title).toBe(
      'Bash `npm run migrate` keeps failing with "Error: connect ECONNREFUSED <n>:<n>"',
    );
    // 2 min measured + 4 occurrences × 2 min.
    expect(finding.cost).toMatchObject({
      occurrences: 4,
      measuredMinutes: 2,
      estimatedMinutes: 10,
    });
    expect(finding.proposedLines[0]).toContain('Known failure');
  });

  it('should not fire below the threshold, across tenants, or on empty messages', () => {
    const rows = [
      failure({ sessions: 2 }),
      failure({ tenantId: 'globex', sessions: 2 }),
      failure({ normalisedError: '', sessions: 5 }),
    ];
    expect(detectRecurringFailures(rows, settings)).toEqual([]);
  });

  it('should give the same key for the same pattern, a different one for another', () => {
    const a = detectRecurringFailures([failure({ sessions: 3 })], settings);
    const b = detectRecurringFailures([failure({ sessions: 4, projectId: 'acme/web' })], settings);
    const other = detectRecurringFailures(
      [failure({ sessions: 3, normalisedError: 'ENOSPC: no space left on device' })],
      settings,
    );
    expect(a[0].key).toBe(b[0].key);
    expect(other[0].key).not.toBe(a[0].key);
  });
});

function correction(
  n: number,
  sessionId: string,
  text: string,
  projectId = 'acme/api',
): CorrectionRow {
  const classified = userCorrectionOf(text);
  if (classified === null) throw new Error(`not a correction: ${text}`);
  return {
    ...classified,
    tenantId: 'acme',
    projectId,
    sessionId,
    eventId: `c-${n}`,
    agentId: 'codex',
    at: T0 + n * 60_000,
  };
}

describe('repeated corrections', () => {
  it('should classify corrections and rules with the distiller, and nothing else', () => {
    expect(
      userCorrectionOf("No, don't mock the clock in the refresh test. Use fake timers."),
    ).toEqual({
      kind: 'correction',
      statement: "don't mock the clock in the refresh test. Use fake timers.",
    });
    expect(userCorrectionOf('Always run the linter before committing anything.')).toMatchObject({
      kind: 'rule',
    });
    expect(userCorrectionOf('How do we run the linter before committing?')).toBeNull();
    expect(userCorrectionOf('add a regression test for the refresh race')).toBeNull();
  });

  it('should fire when the same thing is said in enough sessions, in different words', () => {
    const clusters = new CorrectionClusters(settings);
    clusters.add(correction(1, 's-1', "No, don't use npm in this repository, use pnpm."));
    clusters.add(correction(2, 's-2', 'Never use npm in this repository: pnpm only.'));
    clusters.add(correction(3, 's-3', "No, that's wrong, this repository uses pnpm, not npm."));
    // Noise: corrections about other things, and the same correction twice in one session.
    clusters.add(correction(4, 's-4', 'Actually, the staging cluster deploys on Tuesdays only.'));
    clusters.add(
      correction(5, 's-5', 'No, the invoice totals are rounded per line, not per order.'),
    );
    clusters.add(correction(6, 's-6', 'Wait, the feature flag must stay off for mobile users.'));
    clusters.add(correction(7, 's-6', 'Wait, the feature flag must stay off for mobile users.'));
    const findings = clusters.findings();
    expect(findings).toHaveLength(1);
    expect(findings[0]).toMatchObject({
      kind: 'repeated-correction',
      sessions: 3,
      cost: { occurrences: 3 },
      evidence: { sessionIds: ['s-1', 's-2', 's-3'], eventIds: ['c-1', 'c-2', 'c-3'] },
    });
    expect(findings[0].proposedLines[0]).toMatch(/^- .*pnpm/);
    expect(clusters.timeline()).toEqual([
      { day: '2026-11-20', kind: 'repeated-correction', count: 3 },
    ]);
  });

  it('should merge clusters that a third phrasing links, and not cluster generic corrections', () => {
    const clusters = new CorrectionClusters(settings);
    clusters.add(
      correction(1, 's-1', 'No, stop running npm here: use pnpm for installs and scripts.'),
    );
    clusters.add(
      correction(2, 's-2', "No, don't use npm in this repository. We use pnpm for everything."),
    );
    // Similar to the second only, then to both: the two clusters become one.
    clusters.add(correction(3, 's-3', "Actually, this repository uses pnpm, don't use npm."));
    clusters.add(correction(4, 's-4', 'No, use pnpm for the installs and scripts, never npm.'));
    // Generic corrections share one word ("meant") with each other: no cluster.
    clusters.add(correction(5, 's-5', 'No, the invoice export is not what I meant.'));
    clusters.add(correction(6, 's-6', 'No, the sidebar layout is not what I meant.'));
    clusters.add(correction(7, 's-7', 'No, the webhook retry is not what I meant.'));
    const findings = clusters.findings();
    expect(findings.map((f) => [f.sessions, f.evidence.eventIds])).toEqual([
      [4, ['c-1', 'c-2', 'c-3', 'c-4']],
    ]);
  });

  it('should keep the corrections of different projects apart', () => {
    const clusters = new CorrectionClusters(settings);
    clusters.add(correction(1, 's-1', "No, don't use npm here, use pnpm.", 'acme/api'));
    clusters.add(correction(2, 's-2', "No, don't use npm here, use pnpm.", 'acme/web'));
    clusters.add(correction(3, 's-3', "No, don't use npm here, use pnpm.", 'acme/ops'));
    expect(clusters.findings()).toEqual([]);
  });
});

function loop(overrides: Partial<RetryLoopRow>): RetryLoopRow {
  return {
    tenantId: 'acme',
    projectId: 'acme/api',
    toolName: 'Bash',
    command: 'npm test',
    sessions: 3,
    occurrences: 10,
    durationMs: 0,
    tokens: 2_000,
    firstAt: T0,
    lastAt: T0 + DAY,
    sessionIds: ['s-1', 's-2', 's-3'],
    eventIds: ['e-1', 'e-2', 'e-3'],
    agentIds: ['claude-code'],
    ...overrides,
  };
}

describe('detectRetryLoops (tool misuse)', () => {
  it('should fire on a retry habit seen in enough sessions', () => {
    const [finding] = detectRetryLoops([loop({})], settings);
    expect(finding).toMatchObject({ kind: 'tool-misuse', sessions: 3, cost: { tokens: 2_000 } });
    // 10 × 2 min + 2000 tokens / 1000 per minute.
    expect(finding.cost.estimatedMinutes).toBe(22);
    expect(finding.title).toBe('Bash `npm test` rerun while it keeps failing');
  });

  it('should not fire on a loop in too few sessions or without a command', () => {
    expect(detectRetryLoops([loop({ sessions: 2 }), loop({ command: '  ' })], settings)).toEqual(
      [],
    );
  });
});

function staleMemory(overrides: Partial<StaleMemoryRow>): StaleMemoryRow {
  return {
    tenantId: 'acme',
    projectId: 'acme/api',
    memoryId: 'm-1',
    memoryType: 'gotcha',
    content: 'src/auth/refresh.ts retries twice',
    staleAt: T0,
    lastAccessedAt: T0 + DAY,
    accessCount: 7,
    provenanceSessionIds: ['s-2', 's-1'],
    ...overrides,
  };
}

describe('detectStaleInjections', () => {
  const window = { from: T0 - DAY, to: T0 + 7 * DAY };

  it('should fire on a stale memory served after it went stale, within the window', () => {
    const [finding] = detectStaleInjections([staleMemory({})], window, settings);
    expect(finding).toMatchObject({
      kind: 'stale-memory',
      memoryId: 'm-1',
      evidence: { memoryIds: ['m-1'], sessionIds: ['s-1', 's-2'] },
    });
  });

  it('should not fire when it was last served before it went stale, or outside the window', () => {
    const rows = [
      staleMemory({ lastAccessedAt: T0 - 1 }),
      staleMemory({ memoryId: 'm-2', lastAccessedAt: T0 + 30 * DAY }),
    ];
    expect(detectStaleInjections(rows, window, settings)).toEqual([]);
  });
});
