import type { EpochMillis, Proposal } from '@engram/contracts';
import { frictionClusterId, parseFrictionSection } from './friction-review';
import { correctionsAlike } from './repeated-corrections';
import type { FrictionKind, FrictionProposal, FrictionScope } from './friction-types';

/**
 * "Did it recur since approval?" (issue #21): the measure of whether a change made on a friction
 * proposal changed the agents' behaviour. For each approved friction proposal in the report's
 * scope, the frictions found from its approval to the end of the report's window that are the
 * same cluster, counted.
 */

/** An approved friction proposal, as the recurrence check needs it. */
export interface ApprovedFriction {
  proposalId: string;
  tenantId: string;
  projectId: string;
  kind: FrictionKind;
  clusterId: string;
  title: string;
  target: string | null;
  approvedAt: EpochMillis;
  /** The memory a stale-memory proposal retires (null otherwise). */
  memoryId: string | null;
  /** The lines a file proposal adds (its patch without the marker), for corrections. */
  lines: string[];
}

export interface FrictionRecurrence {
  proposalId: string;
  title: string;
  kind: FrictionKind;
  target: string | null;
  approvedAt: EpochMillis;
  /** The end of the span checked: the report window's end. */
  checkedUntil: EpochMillis;
  recurred: boolean;
  /** Distinct sessions with the friction since approval. */
  sessions: number;
  /** Times it happened since approval. */
  occurrences: number;
  lastSeenAt: EpochMillis | null;
  /** Sessions and events that show it recurred (bounded samples). */
  evidence: { sessionIds: string[]; eventIds: string[] };
}

/** The approved friction records in a report's scope, oldest approval first. */
export function approvedFrictionIn(
  records: readonly Proposal[],
  scope: FrictionScope,
): ApprovedFriction[] {
  const approved: ApprovedFriction[] = [];
  for (const record of records) {
    const cluster = parseFrictionSection(record.section);
    if (record.kind !== 'friction' || record.status !== 'approved' || cluster === null) continue;
    if (record.decidedAt === null || !inScope(record, scope)) continue;
    approved.push({
      proposalId: record.proposalId,
      tenantId: record.tenantId,
      projectId: record.projectId,
      kind: cluster.kind,
      clusterId: cluster.clusterId,
      title: record.title ?? record.text,
      target: record.target,
      approvedAt: record.decidedAt,
      memoryId: record.target === 'memory' ? (record.evidenceMemoryIds[0] ?? null) : null,
      lines: addedLines(record.text),
    });
  }
  return approved.sort(
    (a, b) => a.approvedAt - b.approvedAt || a.proposalId.localeCompare(b.proposalId),
  );
}

function inScope(record: Proposal, scope: FrictionScope): boolean {
  switch (scope.kind) {
    case 'all':
      return true;
    case 'tenant':
      return record.tenantId === scope.tenantId;
    case 'project':
      return (
        record.projectId === scope.projectId &&
        (scope.tenantId === null || record.tenantId === scope.tenantId)
      );
  }
}

/** The `+` lines of a unified diff, without the file header and the engram marker comment. */
function addedLines(text: string): string[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('+') && !line.startsWith('+++'))
    .map((line) => line.slice(1))
    .filter((line) => line.trim() !== '' && !line.startsWith('<!-- engram '));
}

/**
 * Whether a friction found after the approval is the approved proposal's: the same tenant, and
 * the same cluster (subject or natural key), the same memory for stale memories, or — for
 * corrections, whose clusters are named after their first correction and so differ between
 * windows — a line of the proposal said again (the clusters' own similarity).
 */
export function sameFriction(
  approved: ApprovedFriction,
  found: FrictionProposal,
  correctionSimilarity: number,
): boolean {
  if (found.tenantId !== approved.tenantId) return false;
  if (frictionClusterId(found) === approved.clusterId) return true;
  if (approved.memoryId !== null) return found.memoryId === approved.memoryId;
  if (approved.kind !== 'repeated-correction' || found.kind !== 'repeated-correction') return false;
  if (!found.projectIds.includes(approved.projectId)) return false;
  return found.proposedLines.some((line) =>
    approved.lines.some((approvedLine) =>
      correctionsAlike(line, approvedLine, correctionSimilarity),
    ),
  );
}

/**
 * The recurrence of an approved proposal from the frictions found between its approval and
 * `checkedUntil` (a report over that span with a one-session threshold: once is a recurrence).
 * Several matching clusters add up; their sessions may overlap, so the sessions are the largest
 * one's at least and their sum at most — the sum is given (an upper bound, said in the docs).
 */
export function frictionRecurrence(
  approved: ApprovedFriction,
  foundSinceApproval: readonly FrictionProposal[],
  checkedUntil: EpochMillis,
  options: { correctionSimilarity: number; maxEvidence: number },
): FrictionRecurrence {
  const matches = foundSinceApproval.filter((found) =>
    sameFriction(approved, found, options.correctionSimilarity),
  );
  const sample = (of: (found: FrictionProposal) => readonly string[]) =>
    [...new Set(matches.flatMap(of))].sort().slice(0, options.maxEvidence);
  return {
    proposalId: approved.proposalId,
    title: approved.title,
    kind: approved.kind,
    target: approved.target,
    approvedAt: approved.approvedAt,
    checkedUntil,
    recurred: matches.length > 0,
    sessions: matches.reduce((sum, found) => sum + found.sessions, 0),
    occurrences: matches.reduce((sum, found) => sum + found.cost.occurrences, 0),
    lastSeenAt: matches.length === 0 ? null : Math.max(...matches.map((found) => found.lastAt)),
    evidence: {
      sessionIds: sample((found) => found.evidence.sessionIds),
      eventIds: sample((found) => found.evidence.eventIds),
    },
  };
}
