import type { ProposalMessage, StatusFilter } from '@engram/app-distiller';
import {
  frictionPatchTarget,
  isFrictionProposalId,
  isoDay,
  parseFrictionSection,
  REFLECTION_SECTIONS,
} from '@engram/core';
import { count } from './cli-text';

/**
 * Proposals for people, grouped like seed 001's REVIEW.md: the reflector's MEMORY.md lines by
 * section, then the friction report's proposals (`f-…`) by kind, each with its title, target and
 * severity (its exact change is `engram review apply ID` or `--json`).
 */
export function formatProposals(
  proposals: readonly ProposalMessage[],
  status: StatusFilter,
): string {
  const what = status === 'all' ? '' : `${status} `;
  if (proposals.length === 0) return `no ${what}proposals`;
  const friction = proposals.filter(isFrictionMessage);
  const memory = proposals.filter((p) => !isFrictionMessage(p));
  const lines: string[] = [];
  if (memory.length > 0) {
    lines.push(`# ${memory.length} ${what}memory proposal${memory.length === 1 ? '' : 's'}`);
    for (const section of REFLECTION_SECTIONS) {
      const items = memory.filter((p) => p.section === section);
      if (items.length === 0) continue;
      lines.push('', `## Proposed for: ${section}`);
      for (const p of items) lines.push(proposalLine(p, p.text));
    }
  }
  if (friction.length > 0) {
    if (lines.length > 0) lines.push('');
    lines.push(`# ${friction.length} ${what}friction proposal${friction.length === 1 ? '' : 's'}`);
    const kindOf = (p: ProposalMessage) => parseFrictionSection(p.section)?.kind ?? 'friction';
    for (const kind of [...new Set(friction.map(kindOf))].sort()) {
      lines.push('', `## Friction: ${kind}`);
      for (const p of friction.filter((item) => kindOf(item) === kind)) {
        lines.push(proposalLine(p, `${p.title} → ${frictionTargetOf(p)} (severity ${p.severity})`));
      }
    }
  }
  return lines.join('\n');
}

/** Where a friction proposal's change goes: the file its patch names, else a memory. */
function frictionTargetOf(p: ProposalMessage): string {
  return frictionPatchTarget({ ...p, kind: 'friction', status: 'pending' }) ?? 'memory';
}

/** A friction proposal (the message's kind; an f- id from a server older than the field). */
export function isFrictionMessage(p: Pick<ProposalMessage, 'kind' | 'proposalId'>): boolean {
  return p.kind === 'friction' || (p.kind === '' && isFrictionProposalId(p.proposalId));
}

function proposalLine(p: ProposalMessage, what: string): string {
  const evidence = [
    count(p.evidenceMemoryIds.length, 'memory', 'memories'),
    count(p.evidenceEventIds.length, 'event', 'events'),
    `sessions ${p.evidenceSessionIds.join(', ')}`,
  ].join(', ');
  const state =
    p.status === 'pending'
      ? `expires ${isoDay(p.expiresAt)}`
      : `${p.status} ${isoDay(p.decidedAt)}`;
  return `- [${p.status === 'approved' ? 'x' : ' '}] \`${p.proposalId}\` ${p.projectId}: ${what} — ${evidence}; ${state}`;
}

export function formatDecision(decision: { proposal: ProposalMessage; changed: boolean }): string {
  const p = decision.proposal;
  const friction = isFrictionMessage(p);
  const what = friction ? p.title : p.text;
  const head = `${p.proposalId} ${p.status}${decision.changed ? '' : ' (already)'}: ${what}`;
  if (friction && p.status === 'approved') {
    const target = frictionTargetOf(p);
    return target === 'memory'
      ? `${head}\n  → ${p.text}`
      : `${head}\n  → engram review apply ${p.proposalId} --out patch.diff (changes ${target})`;
  }
  return p.promotedMemoryId === ''
    ? head
    : `${head}\n  → user-verified memory ${p.promotedMemoryId}`;
}
