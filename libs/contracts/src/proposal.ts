import type { EpochMillis, EventEnvelope } from './envelope';

export const PROPOSAL_KINDS = ['reflection', 'friction'] as const;
export type ProposalKind = (typeof PROPOSAL_KINDS)[number];

export const PROPOSAL_STATUSES = ['pending', 'approved', 'rejected', 'expired'] as const;
export type ProposalStatus = (typeof PROPOSAL_STATUSES)[number];

/** `memory.proposals.v1` (compacted, key proposalId): a review proposal (SPEC §8, §9). */
export interface Proposal extends EventEnvelope {
  /** p-YYYYMMDD-NNN (reflector) or f-YYYYMMDD-NNN (friction report). */
  proposalId: string;
  kind: ProposalKind;
  status: ProposalStatus;
  /** Reflector section: User, Hard Rules, System Architecture, Patterns. */
  section: string | null;
  /** Friction target: AGENTS.md, CLAUDE.md, a memory, a skill, a config file. */
  target: string | null;
  title: string | null;
  /** The proposed line or exact change. */
  text: string;
  evidenceSessionIds: string[];
  evidenceEpisodeIds: string[];
  evidenceMemoryIds: string[];
  /** The source events (prompts, tool calls) behind the evidence. */
  evidenceEventIds: string[];
  /** Friction: sessions affected × estimated cost. */
  severity: number | null;
  createdAt: EpochMillis;
  expiresAt: EpochMillis;
  decidedAt: EpochMillis | null;
  promotedMemoryId: string | null;
}
