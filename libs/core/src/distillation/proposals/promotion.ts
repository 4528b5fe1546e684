import type { EpochMillis, Memory, MemoryType } from '@engram/contracts';
import { idOf } from '../../ids/deterministic-id';
import { NO_MEMORY_DETAILS } from '../../memory';
import { memoryIdOf } from '../memories';
import { truncateChars } from '../tokens';
import type { ReflectionSection, ReviewProposal } from './types';

/** The memory type an approved line of each section becomes. */
export const SECTION_MEMORY_TYPES: Readonly<Record<ReflectionSection, MemoryType>> = {
  User: 'preference',
  'Hard Rules': 'requirement',
  'System Architecture': 'module_insight',
  Patterns: 'pattern',
};

/** `section:user`, `section:hard-rules`, …: how MEMORY.md finds the section again. */
export function sectionTag(section: ReflectionSection): string {
  return `section:${section.toLowerCase().replace(/\s+/g, '-')}`;
}

/** Confidence of a reviewed memory: a person confirmed it. */
export const PROMOTED_CONFIDENCE = 0.95;

/**
 * The long-term memory an approval creates: user-verified, global, not decaying, derived from the
 * evidence memories (relations `derived_from`), with the evidence events and sessions as
 * provenance. Deterministic: the id is SPEC §6's uuid v5 of tenant, project, type and the
 * approved text; times are the decision's.
 */
export function promotedMemory(
  proposal: ReviewProposal,
  decidedAt: EpochMillis,
  decidedBy: string | null,
  agentId = 'engram-distiller',
): Memory {
  const memoryType = SECTION_MEMORY_TYPES[proposal.section];
  const memoryId = memoryIdOf(proposal.tenantId, proposal.projectId, memoryType, proposal.text);
  return {
    eventId: idOf('memory-record', memoryId, proposal.proposalId),
    tenantId: proposal.tenantId,
    projectId: proposal.projectId,
    sessionId: proposal.evidence.sessionIds[0] ?? proposal.proposalId,
    agentId,
    userId: decidedBy,
    timestamp: decidedAt,
    schemaVersion: 1,
    memoryId,
    memoryType,
    content: proposal.text,
    confidence: PROMOTED_CONFIDENCE,
    tags: ['reviewed', sectionTag(proposal.section), `proposal:${proposal.proposalId}`],
    relatedFiles: [],
    relatedModules: [],
    createdAt: decidedAt,
    lastAccessedAt: decidedAt,
    accessCount: 0,
    workUnitRef: null,
    scope: 'global',
    source: 'distilled',
    episodeId: proposal.evidence.episodeIds[0] ?? null,
    commitSha: null,
    provenanceSessionIds: [...proposal.evidence.sessionIds],
    sourceEventIds: [...proposal.evidence.eventIds],
    targetNodeId: null,
    relations: proposal.evidence.memoryIds.map((targetMemoryId) => ({
      targetMemoryId,
      targetFilePath: null,
      relationType: 'derived_from' as const,
      confidence: 1,
      autoExtracted: true,
    })),
    decayHalfLifeDays: null,
    needsReview: false,
    userVerified: true,
    citationText: truncateChars(proposal.title, 80),
    staleAt: null,
    embedding: null,
    embeddingModel: null,
    ...NO_MEMORY_DETAILS,
  };
}
