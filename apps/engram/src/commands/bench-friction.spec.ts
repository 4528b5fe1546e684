import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateOrganisation, measureFrictionReport, plantedFound } from './bench-friction';

// The generator of `engram bench friction` at a small size: the report finds the frictions it
// planted (the bar: recall ≥ 0.9) and little else (one-off failures and corrections
// are noise, not proposals).

describe('engram bench friction (small)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'engram-bench-friction-spec-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('should find the planted frictions of a generated organisation', async () => {
    const counts = generateOrganisation(dir, {
      developers: 50,
      weeks: 4,
      sessionsPerDay: 2,
      eventsPerSession: 40,
    });
    expect(counts.sessions).toBe(2_000);
    const { report } = await measureFrictionReport(dir, 4);
    expect(report.totals).toEqual(counts);
    const { planted, found, missed, decoysReported } = plantedFound(report);
    expect(found / planted, `missed: ${missed.join('; ')}`).toBeGreaterThanOrEqual(0.9);
    // Configuration drift and missing skills are among those found; their decoys are not.
    const kinds = report.proposals.flatMap((proposal) => [proposal.kind, ...proposal.alsoSeenAs]);
    expect(kinds).toEqual(expect.arrayContaining(['configuration-drift', 'missing-skill']));
    expect(decoysReported).toEqual([]);
    expect(report.proposals.length).toBeLessThanOrEqual(planted + 2);
    for (const proposal of report.proposals) {
      expect(proposal.evidence.eventIds.length).toBeGreaterThan(0);
    }
  }, 60_000);
});
