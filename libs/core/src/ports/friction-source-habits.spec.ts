import { describe, expect, it } from 'vitest';
import type { ConfigRepairRow } from '../friction/config-drift';
import { DEFAULT_FRICTION_SETTINGS } from '../friction/friction-settings';
import type { RecipeRow } from '../friction/missing-skills';
import type { FrictionSource } from './friction-source';
import { FRICTION_REPORT_STEPS, frictionReportFrom } from './friction-source-report';

// frictionReportFrom with configuration drift and missing skills: the optional reads of a source
// become findings and timeline entries, and a source without them reports gaps, not silence.

const T0 = Date.UTC(2026, 10, 20, 9);
const DAY = 86_400_000;
const WINDOW = { from: T0 - DAY, to: T0 + 6 * DAY };
const MEASURES = {
  durationMs: 10_000,
  tokens: 0,
  firstAt: T0,
  lastAt: T0 + DAY,
  sessionIds: ['s-1', 's-2', 's-3', 's-4', 's-5'],
  eventIds: ['e-1', 'e-2'],
  agentIds: ['claude-code'],
};
const DRIFT: ConfigRepairRow = {
  ...MEASURES,
  tenantId: 'acme',
  projectId: 'acme/api',
  repairKind: 'config-edit',
  repair: '.env',
  failureTool: 'Bash',
  normalisedError: 'Error: Missing DATABASE_URL',
  sampleMessage: 'Error: Missing DATABASE_URL',
  sampleCommand: 'npm run dev',
  sessions: 4,
  occurrences: 4,
  days: { '2026-11-20': 3, '2026-11-21': 1 },
};
const RECIPE: RecipeRow = {
  ...MEASURES,
  tenantId: 'acme',
  projectId: 'acme/lib',
  steps: ['$ git pull --rebase', 'Edit CHANGELOG.md', '$ npm version patch', '$ npm publish'],
  sessions: 5,
  occurrences: 6,
  days: { '2026-11-21': 6 },
};

/** A source with enough data and nothing but what `extra` reads. */
function source(extra: Partial<FrictionSource>): FrictionSource {
  return {
    mode: 'embedded',
    gaps: () => [],
    totals: () => ({ sessions: 50, events: 5_000 }),
    failurePatterns: () => [],
    retryLoops: () => [],
    failureTimeline: () => [],
    corrections: () => 0,
    staleMemories: () => [],
    close: () => undefined,
    ...extra,
  };
}

describe('frictionReportFrom: configuration drift and missing skills', () => {
  it('should turn the optional reads into proposals and timeline entries', async () => {
    let steps = 0;
    const outcome = await frictionReportFrom(
      source({ configRepairs: () => [DRIFT], recipes: () => [RECIPE] }),
      {
        window: WINDOW,
        scope: { kind: 'all' },
        settings: DEFAULT_FRICTION_SETTINGS,
        onStep: () => (steps += 1),
      },
    );
    if (outcome.kind !== 'report') throw new Error('refused');
    const { report } = outcome;
    expect(steps).toBe(FRICTION_REPORT_STEPS);
    expect(report.proposals.map((p) => [p.kind, p.target]).sort()).toEqual([
      ['configuration-drift', 'CLAUDE.md'],
      ['missing-skill', 'skill'],
    ]);
    expect(report.timeline).toEqual([
      { day: '2026-11-20', kind: 'configuration-drift', count: 3 },
      { day: '2026-11-21', kind: 'configuration-drift', count: 1 },
      { day: '2026-11-21', kind: 'missing-skill', count: 6 },
    ]);
    expect(report.unavailable).toBeUndefined();
  });

  it('should report the reads a source does not have as gaps', async () => {
    const outcome = await frictionReportFrom(source({}), {
      window: WINDOW,
      scope: { kind: 'all' },
      settings: DEFAULT_FRICTION_SETTINGS,
    });
    if (outcome.kind !== 'report') throw new Error('refused');
    expect(outcome.report.proposals).toEqual([]);
    expect(outcome.report.unavailable?.map((gap) => [gap.signal, gap.partial])).toEqual([
      ['config-repairs', false],
      ['recipes', false],
    ]);
  });
});
