import { isoDate } from '../friction/friction-findings';
import {
  buildFrictionReport,
  frictionShortfall,
  type FrictionShortfall,
} from '../friction/friction-report';
import type { FrictionSettings } from '../friction/friction-settings';
import type { FrictionDayCount, FrictionScope, FrictionWindow } from '../friction/friction-types';
import { detectRecurringFailures } from '../friction/recurring-failures';
import { CorrectionClusters } from '../friction/repeated-corrections';
import { detectStaleInjections } from '../friction/stale-memories';
import { detectRetryLoops } from '../friction/tool-misuse';
import type { FrictionSource } from './friction-source';
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
export const FRICTION_REPORT_STEPS = 6;

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
  const timeline: FrictionDayCount[] = [
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
    findings: [...failures, ...retries, ...corrections, ...stale],
    timeline,
    maxEvidence: settings.maxEvidence,
  });
  const gaps = source.gaps();
  return {
    kind: 'report',
    report:
      gaps.length === 0 ? report : { ...report, unavailable: gaps.map((gap) => ({ ...gap })) },
  };
}
