import { idOf } from '../ids/deterministic-id';
import {
  clusterMeasures,
  frictionConfidence,
  type FailureGroupMeasures,
  inlineCode,
  isoDate,
  oneLineCut,
} from './friction-findings';
import type { FrictionSettings } from './friction-settings';
import type { FrictionFinding } from './friction-types';

/**
 * One error pattern of one project over the window: failing tool calls grouped by tool and
 * `normaliseErrorMessage` of their message (the observer's "same error"), aggregated by the
 * adapter (a GROUP BY in SQL). Samples are sorted and bounded; counts are exact.
 */
export interface FailurePatternRow extends FailureGroupMeasures {
  tenantId: string;
  projectId: string;
  toolName: string;
  normalisedError: string;
  /** One raw message of the pattern. */
  sampleMessage: string;
  /** One command that failed this way, when the tool runs commands. */
  sampleCommand: string | null;
}

const MAX_ERROR_CHARS = 160;

/**
 * Recurring failures: the same error pattern (tool + normalised message) in at least
 * `minSessionsPerFinding` sessions. The rows of one tenant's projects with the same pattern are
 * one cluster (one proposal naming every project). Empty messages (a refused call) are no
 * pattern.
 */
export function detectRecurringFailures(
  rows: readonly FailurePatternRow[],
  settings: FrictionSettings,
): FrictionFinding[] {
  const clusters = new Map<string, FailurePatternRow[]>();
  for (const row of rows) {
    if (row.normalisedError.trim() === '') continue;
    const key = idOf(
      'friction',
      'recurring-failure',
      row.tenantId,
      row.toolName,
      row.normalisedError,
    );
    const cluster = clusters.get(key);
    if (cluster) cluster.push(row);
    else clusters.set(key, [row]);
  }
  const findings: FrictionFinding[] = [];
  for (const [key, cluster] of clusters) {
    const sessions = sum(cluster, (row) => row.sessions);
    if (sessions < settings.minSessionsPerFinding) continue;
    const first = [...cluster].sort((a, b) => a.projectId.localeCompare(b.projectId))[0];
    const { occurrences, firstAt, lastAt, cost, evidence, agentIds } = clusterMeasures(
      cluster,
      settings,
    );
    const { command, what } = failedCall(first.toolName, cluster);
    const error = oneLineCut(first.normalisedError, MAX_ERROR_CHARS);
    const projectIds = [...new Set(cluster.map((row) => row.projectId))].sort();
    findings.push({
      kind: 'recurring-failure',
      key,
      subject: command === null ? null : commandSubject(first.tenantId, first.toolName, command),
      alsoSeenAs: [],
      tenantId: first.tenantId,
      projectIds,
      title: `${what} keeps failing with "${error}"`,
      summary:
        `${what} failed ${occurrences} times with "${error}" in ${sessions} sessions ` +
        `(${isoDate(firstAt)} – ${isoDate(lastAt)}). Example: "${oneLineCut(first.sampleMessage, MAX_ERROR_CHARS)}".`,
      sessions,
      firstAt,
      lastAt,
      cost,
      evidence,
      agentIds,
      proposedLines: [
        `- Known failure: ${what} fails with "${error}" (seen in ${sessions} sessions). ` +
          'When it happens, find and fix the cause before running it again, and write the fix here.',
      ],
      memoryId: null,
      confidence: frictionConfidence(sessions, settings.minSessionsPerFinding, 0.6),
    });
  }
  return findings;
}

/**
 * The failed call of a cluster as a proposal names it: the tool and one of its commands
 * (`Bash \`npm run migrate\``), or the tool alone when none ran a command.
 */
export function failedCall(
  toolName: string,
  rows: readonly { sampleCommand: string | null }[],
): { command: string | null; what: string } {
  const command = rows.map((row) => row.sampleCommand).find((c) => c !== null) ?? null;
  return {
    command,
    what: command === null ? toolName : `${toolName} ${inlineCode(oneLineCut(command, 80))}`,
  };
}

/** The subject of findings about one command of one tool in one tenant. */
export function commandSubject(tenantId: string, toolName: string, command: string): string {
  return idOf('friction-subject', tenantId, toolName, command.trim());
}

function sum<T>(rows: readonly T[], of: (row: T) => number): number {
  let total = 0;
  for (const row of rows) total += of(row);
  return total;
}
