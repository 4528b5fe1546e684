import { idOf } from '../ids/deterministic-id';
import { groupBy } from '../observation/candidates';
import type { ConfigRepair } from './config-drift-classify';
import {
  clusterMeasures,
  dayCounts,
  frictionConfidence,
  type FailureGroupMeasures,
  inlineCode,
  isoDate,
  oneLineCut,
} from './friction-findings';
import type { FrictionSettings } from './friction-settings';
import type { FrictionDayCount, FrictionFinding } from './friction-types';
import { commandSubject, failedCall } from './recurring-failures';

/**
 * One repair of one project after one error pattern, over the window: a successful tool call
 * that is a ConfigRepair (configRepairOf), paired by the adapter with the failed call just before
 * it in the same user turn, grouped by the repair and the failure's tool and normalised error.
 * `occurrences` counts the repairs; the measures and samples cover the failures and the repairs
 * (evidence: both events).
 */
export interface ConfigRepairRow extends FailureGroupMeasures {
  tenantId: string;
  projectId: string;
  repairKind: ConfigRepair['kind'];
  /** The configuration file (relative to the checkout) or the setup command. */
  repair: string;
  failureTool: string;
  normalisedError: string;
  /** One raw message of the failures. */
  sampleMessage: string;
  /** One command that failed, when the failing tool runs commands. */
  sampleCommand: string | null;
  /** Repairs per UTC day (`YYYY-MM-DD`), for the timeline; absent: not counted. */
  days?: Record<string, number>;
}

const MAX_ERROR_CHARS = 160;

/**
 * Configuration drift: the same setup fixed again and again — the same configuration file edited,
 * or the same setup command rerun, right after the same error, in at least `minDriftSessions`
 * sessions of a project. The repairs of one error pattern are one finding (editing `.env` and
 * restarting the service after the same failure are one drift). The proposal documents the
 * repair and asks to make it permanent in the configuration; its subject is the failing
 * command's, so a recurring failure of that command joins its cluster.
 */
export function detectConfigurationDrift(
  rows: readonly ConfigRepairRow[],
  settings: FrictionSettings,
): FrictionFinding[] {
  const clusters = groupBy(driftingRows(rows, settings), (row) =>
    idOf(
      'friction',
      'configuration-drift',
      row.tenantId,
      row.projectId,
      row.failureTool,
      row.normalisedError,
    ),
  );
  return [...clusters].map(([key, cluster]) => driftFinding(key, cluster, settings));
}

/** The rows that are drift (enough sessions, a real error pattern). */
function driftingRows(
  rows: readonly ConfigRepairRow[],
  settings: FrictionSettings,
): ConfigRepairRow[] {
  return rows.filter(
    (row) => row.sessions >= settings.minDriftSessions && row.normalisedError.trim() !== '',
  );
}

/** The repairs of the reported drifts per day (the "friction over time" chart). */
export function driftTimeline(
  rows: readonly ConfigRepairRow[],
  settings: FrictionSettings,
): FrictionDayCount[] {
  return dayCounts(driftingRows(rows, settings), 'configuration-drift');
}

function driftFinding(
  key: string,
  unordered: readonly ConfigRepairRow[],
  settings: FrictionSettings,
): FrictionFinding {
  // Most sessions first: the repair that is done most often leads the title.
  const cluster = [...unordered].sort(
    (a, b) => b.sessions - a.sessions || a.repair.localeCompare(b.repair),
  );
  const first = cluster[0];
  // Repairs of one failure overlap in sessions: the largest count is a lower bound of them all.
  const sessions = first.sessions;
  const { occurrences, firstAt, lastAt, cost, evidence, agentIds } = clusterMeasures(
    cluster,
    settings,
  );
  const { command, what: failing } = failedCall(first.failureTool, cluster);
  const error = oneLineCut(first.normalisedError, MAX_ERROR_CHARS);
  const repairs = cluster.map(repairLabel);
  const files = cluster.filter((row) => row.repairKind === 'config-edit').map((row) => row.repair);
  const permanent =
    files.length > 0
      ? `commit the fix to ${files.map((file) => inlineCode(file)).join(', ')}`
      : 'put the repair into the project setup (a setup script, the service or container configuration)';
  return {
    kind: 'configuration-drift',
    key,
    subject: command === null ? null : commandSubject(first.tenantId, first.failureTool, command),
    alsoSeenAs: [],
    tenantId: first.tenantId,
    projectIds: [first.projectId],
    title: `${failing} fails with "${error}" until ${repairs[0]}, again and again`,
    summary:
      `After ${failing} failed with "${error}", the environment was repaired by hand ` +
      `(${repairs.map((repair, i) => `${repair} in ${cluster[i].sessions} sessions`).join('; ')}) ` +
      `${occurrences} times (${isoDate(firstAt)} – ${isoDate(lastAt)}). ` +
      `Example: "${oneLineCut(first.sampleMessage, MAX_ERROR_CHARS)}".`,
    sessions,
    firstAt,
    lastAt,
    cost,
    evidence,
    agentIds,
    proposedLines: [
      `- Configuration drift: when ${failing} fails with "${error}", the known repair is ` +
        `${repairs.join(', then ')} (done by hand in ${sessions} sessions). ` +
        `Do not repeat it: ${permanent}, so it stays fixed.`,
    ],
    memoryId: null,
    confidence: frictionConfidence(sessions, settings.minDriftSessions, 0.6),
  };
}

function repairLabel(row: ConfigRepairRow): string {
  return row.repairKind === 'config-edit'
    ? `editing ${inlineCode(row.repair)}`
    : `running ${inlineCode(oneLineCut(row.repair, 80))}`;
}
