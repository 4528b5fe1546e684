import type { Proposal } from '@engram/contracts';
import { idOf } from '../../ids/deterministic-id';
import { REFLECTION_SECTIONS, type ReflectionSection, type ReviewProposal } from './types';

/**
 * The `memory.proposals.v1` record of a proposal's current state (compacted by proposalId, so the
 * topic always holds each proposal's latest state). The record's eventId changes with each
 * state, so a state is published once however often it is replayed. The review history stays with
 * the distiller (its changelog and its log lines).
 */
export function toProposalRecord(proposal: ReviewProposal, agentId = 'engram-distiller'): Proposal {
  const at = proposal.decidedAt ?? proposal.createdAt;
  return {
    eventId: idOf('proposal-record', proposal.proposalId, proposal.status, at),
    tenantId: proposal.tenantId,
    projectId: proposal.projectId,
    sessionId: proposal.evidence.sessionIds[0] ?? proposal.proposalId,
    agentId,
    userId: proposal.decidedBy,
    timestamp: at,
    schemaVersion: 1,
    proposalId: proposal.proposalId,
    kind: 'reflection',
    status: proposal.status,
    section: proposal.section,
    target: null,
    title: proposal.title,
    text: proposal.text,
    evidenceSessionIds: [...proposal.evidence.sessionIds],
    evidenceEpisodeIds: [...proposal.evidence.episodeIds],
    evidenceMemoryIds: [...proposal.evidence.memoryIds],
    evidenceEventIds: [...proposal.evidence.eventIds],
    severity: null,
    createdAt: proposal.createdAt,
    expiresAt: proposal.expiresAt,
    decidedAt: proposal.decidedAt,
    promotedMemoryId: proposal.promotedMemoryId,
  };
}

/**
 * A proposal back from its record. The history is not in the record and comes back empty;
 * `originalText` is the record's text. Null for records that
 * are not reflector proposals (friction `f-…` proposals, or an unknown section).
 */
export function fromProposalRecord(record: Proposal): ReviewProposal | null {
  if (record.kind !== 'reflection' || !isSection(record.section)) return null;
  return {
    proposalId: record.proposalId,
    tenantId: record.tenantId,
    projectId: record.projectId,
    section: record.section,
    title: record.title ?? record.text,
    text: record.text,
    originalText: record.text,
    evidence: {
      memoryIds: [...record.evidenceMemoryIds],
      eventIds: [...record.evidenceEventIds],
      sessionIds: [...record.evidenceSessionIds],
      episodeIds: [...record.evidenceEpisodeIds],
    },
    status: record.status,
    createdAt: record.createdAt,
    expiresAt: record.expiresAt,
    decidedAt: record.decidedAt,
    decidedBy: record.status === 'pending' || record.status === 'expired' ? null : record.userId,
    promotedMemoryId: record.promotedMemoryId,
    history: [],
  };
}

function isSection(section: string | null): section is ReflectionSection {
  return (REFLECTION_SECTIONS as readonly (string | null)[]).includes(section);
}
