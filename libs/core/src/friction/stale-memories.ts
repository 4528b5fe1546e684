import type { EpochMillis } from '@engram/contracts';
import { idOf } from '../ids/deterministic-id';
import { frictionCost, isoDate, oneLineCut } from './friction-findings';
import type { FrictionSettings } from './friction-settings';
import type { FrictionFinding } from './friction-types';

/** A memory that is stale (`staleAt` set), with its access counters. */
export interface StaleMemoryRow {
  tenantId: string;
  projectId: string;
  memoryId: string;
  memoryType: string;
  content: string;
  staleAt: EpochMillis;
  lastAccessedAt: EpochMillis;
  accessCount: number;
  provenanceSessionIds: string[];
}

/**
 * Stale memories that were still injected: accessed (recalled, injected into a prompt) after they
 * went stale, within the window. Every such memory misled at least one session; the proposal is
 * to retire it (or rewrite it, in review). The counters do not say how many sessions: one is
 * counted, the access count is reported.
 */
export function detectStaleInjections(
  rows: readonly StaleMemoryRow[],
  window: { from: EpochMillis; to: EpochMillis },
  settings: FrictionSettings,
): FrictionFinding[] {
  const findings: FrictionFinding[] = [];
  for (const row of rows) {
    const injected =
      row.lastAccessedAt > row.staleAt &&
      row.lastAccessedAt >= window.from &&
      row.lastAccessedAt < window.to;
    if (!injected) continue;
    const content = oneLineCut(row.content, 120);
    findings.push({
      kind: 'stale-memory',
      key: idOf('friction', 'stale-memory', row.tenantId, row.projectId, row.memoryId),
      subject: null,
      alsoSeenAs: [],
      tenantId: row.tenantId,
      projectIds: [row.projectId],
      title: `Stale ${row.memoryType} still injected: "${content}"`,
      summary:
        `Memory ${row.memoryId} went stale on ${isoDate(row.staleAt)} but was still served on ` +
        `${isoDate(row.lastAccessedAt)} (${row.accessCount} accesses in all).`,
      sessions: 1,
      firstAt: row.staleAt,
      lastAt: row.lastAccessedAt,
      cost: frictionCost({ occurrences: 1, durationMs: 0, tokens: 0 }, settings),
      evidence: {
        sessionIds: [...row.provenanceSessionIds].sort().slice(0, settings.maxEvidence),
        eventIds: [],
        memoryIds: [row.memoryId],
      },
      agentIds: [],
      proposedLines: [],
      memoryId: row.memoryId,
      confidence: 0.8,
    });
  }
  return findings;
}
