import { idOf } from '../ids/deterministic-id';
import {
  frictionConfidence,
  type FailureGroupMeasures,
  frictionCost,
  inlineCode,
  isoDate,
  oneLineCut,
} from './friction-findings';
import type { FrictionSettings } from './friction-settings';
import { commandSubject } from './recurring-failures';
import type { FrictionFinding } from './friction-types';

/**
 * A retry loop habit of one project: the same command of the same tool failing at least
 * `minRetries` times within one session, aggregated over the sessions where that happened (the
 * adapter's two-level GROUP BY). `occurrences` counts the failed attempts of those sessions.
 */
export interface RetryLoopRow extends FailureGroupMeasures {
  tenantId: string;
  projectId: string;
  toolName: string;
  command: string;
}

/**
 * Tool misuse: an agent rerunning a failing command unchanged instead of reading the error (the
 * observer's `retried_unchanged`, seen as a habit across sessions). Fires when the loop happened
 * in at least `minSessionsPerFinding` sessions of a project.
 */
export function detectRetryLoops(
  rows: readonly RetryLoopRow[],
  settings: FrictionSettings,
): FrictionFinding[] {
  const findings: FrictionFinding[] = [];
  for (const row of rows) {
    if (row.sessions < settings.minSessionsPerFinding || row.command.trim() === '') continue;
    const command = inlineCode(oneLineCut(row.command, 80));
    const perSession = Math.round((row.occurrences / row.sessions) * 10) / 10;
    findings.push({
      kind: 'tool-misuse',
      key: idOf('friction', 'tool-misuse', row.tenantId, row.projectId, row.toolName, row.command),
      subject: commandSubject(row.tenantId, row.toolName, row.command),
      alsoSeenAs: [],
      tenantId: row.tenantId,
      projectIds: [row.projectId],
      title: `${row.toolName} ${command} rerun while it keeps failing`,
      summary:
        `In ${row.sessions} sessions ${row.toolName} ${command} failed ${perSession} times on ` +
        `average within one session (${row.occurrences} failed attempts, ` +
        `${isoDate(row.firstAt)} – ${isoDate(row.lastAt)}).`,
      sessions: row.sessions,
      firstAt: row.firstAt,
      lastAt: row.lastAt,
      cost: frictionCost(row, settings),
      evidence: { sessionIds: row.sessionIds, eventIds: row.eventIds, memoryIds: [] },
      agentIds: row.agentIds,
      proposedLines: [
        `- When ${command} fails, read its error and change something before running it again: ` +
          `rerunning it unchanged failed ${row.occurrences} times in ${row.sessions} sessions.`,
      ],
      memoryId: null,
      confidence: frictionConfidence(row.sessions, settings.minSessionsPerFinding, 0.6),
    });
  }
  return findings;
}
