import { detectConfigurationDrift, driftTimeline } from '../friction/config-drift';
import { isoDate } from '../friction/friction-findings';
import { detectMissingSkills, missingSkillTimeline } from '../friction/missing-skills';
import {
  buildFrictionReport,
  frictionShortfall,
  type FrictionShortfall,
} from '../friction/friction-report';
import type { FrictionSettings } from '../friction/friction-settings';
import type {
  FrictionDayCount,
  FrictionFinding,
  FrictionScope,
  FrictionWindow,
} from '../friction/friction-types';
import { detectRecurringFailures } from '../friction/recurring-failures';
import { CorrectionClusters } from '../friction/repeated-corrections';
import { detectStaleInjections } from '../friction/stale-memories';
import { detectRetryLoops } from '../friction/tool-misuse';
import type { FrictionSignal, FrictionSignalGap, FrictionSource } from './friction-source';
import type { FrictionReportWithGaps } from './friction-source-gaps';

export interface FrictionReportRequest {
  window: FrictionWindow;
  scope: FrictionScope;
  settings: FrictionSettings;
  /** Called after each of FRICTION_REPORT_STEPS steps (a progress bar). */
  onStep?: () => void;
}

export type FrictionOutcome =
  | { kind: 'report'; report: FrictionReportWithGaps }
  | { kind: 'refused'; shortfall: FrictionShortfall };

/** The steps `frictionReportFrom` reports through `onStep`. */
export const FRICTION_REPORT_STEPS = 8;

/**
 * The friction report from any source (embedded or distributed, the same decisions): the totals
 * and the refusal rule, the core's detectors on the source's aggregated rows, clustering,
 * ranking and ids. The gaps the source declares go into the report ("not available in
 * distributed mode"). Does not close the source.
 */
export async function frictionReportFrom(
  source: FrictionSource,
  request: FrictionReportRequest,
): Promise<FrictionOutcome> {
  const { window, scope, settings } = request;
  const step = request.onStep ?? (() => undefined);
  const totals = await source.totals(window, scope);
  step();
  const shortfall = frictionShortfall(totals, settings);
  if (shortfall !== null) return { kind: 'refused', shortfall };
  const failures = detectRecurringFailures(
    await source.failurePatterns(window, scope, settings),
    settings,
  );
  step();
  const retries = detectRetryLoops(await source.retryLoops(window, scope, settings), settings);
  step();
  const clusters = new CorrectionClusters(settings);
  await source.corrections(window, scope, clusters);
  const corrections = clusters.findings();
  step();
  const stale = detectStaleInjections(await source.staleMemories(window, scope), window, settings);
  step();
  const habits = await habitFindings(source, request, step);
  const timeline: FrictionDayCount[] = [
    ...habits.timeline,
    ...(await source.failureTimeline(window, scope, settings)),
    ...clusters.timeline(),
    ...stale.map((finding) => ({
      day: isoDate(finding.lastAt),
      kind: 'stale-memory' as const,
      count: 1,
    })),
  ];
  step();
  const report = buildFrictionReport({
    window,
    scope,
    totals,
    findings: [...failures, ...retries, ...corrections, ...stale, ...habits.findings],
    timeline,
    maxEvidence: settings.maxEvidence,
  });
  const gaps = [...source.gaps(), ...habits.gaps];
  return {
    kind: 'report',
    report:
      gaps.length === 0 ? report : { ...report, unavailable: gaps.map((gap) => ({ ...gap })) },
  };
}

/**
 * Configuration drift and missing skills, from the optional reads of the source (two steps);
 * a source without one of them gets a gap instead of a silent absence.
 */
async function habitFindings(
  source: FrictionSource,
  request: FrictionReportRequest,
  step: () => void,
): Promise<{
  findings: FrictionFinding[];
  timeline: FrictionDayCount[];
  gaps: FrictionSignalGap[];
}> {
  const { window, scope, settings } = request;
  const result = {
    findings: [] as FrictionFinding[],
    timeline: [] as FrictionDayCount[],
    gaps: [] as FrictionSignalGap[],
  };
  const missing = (signal: FrictionSignal) =>
    result.gaps.push({ signal, partial: false, reason: 'this source does not read it yet' });
  if (source.configRepairs) {
    const rows = await source.configRepairs(window, scope, settings);
    result.findings.push(...detectConfigurationDrift(rows, settings));
    result.timeline.push(...driftTimeline(rows, settings));
  } else missing('config-repairs');
  step();
  if (source.recipes) {
    const rows = await source.recipes(window, scope, settings);
    result.findings.push(...detectMissingSkills(rows, settings));
    result.timeline.push(...missingSkillTimeline(rows, settings));
  } else missing('recipes');
  step();
  return result;
}
