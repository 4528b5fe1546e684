import type { EpochMillis, ProposalStatus } from '@engram/contracts';

/** MEMORY.md's sections in order (seed 001's Joel, Hard Rules, System Architecture, Patterns). */
export const REFLECTION_SECTIONS = [
  'User',
  'Hard Rules',
  'System Architecture',
  'Patterns',
] as const;
export type ReflectionSection = (typeof REFLECTION_SECTIONS)[number];

/** What a proposal rests on: the distilled memories and the events behind them. */
export interface ProposalEvidence {
  memoryIds: string[];
  eventIds: string[];
  sessionIds: string[];
  episodeIds: string[];
}

export type ReviewActionKind = 'approve' | 'edit-and-approve' | 'reject' | 'expire';

/** One step of a proposal's life; the history is the review log and is never rewritten. */
export interface ProposalTransition {
  action: 'create' | ReviewActionKind;
  from: ProposalStatus | null;
  to: ProposalStatus;
  at: EpochMillis;
  by: string | null;
  note: string | null;
}

/** A reflector proposal under review (SPEC §8, seed 001 REVIEW.md). */
export interface ReviewProposal {
  /** `p-YYYYMMDD-NNN`. */
  proposalId: string;
  tenantId: string;
  projectId: string;
  section: ReflectionSection;
  /** A short bold title for the review list. */
  title: string;
  /** The MEMORY.md line; replaced by the reviewer's text on edit-then-approve. */
  text: string;
  /** The text as the reflector proposed it. */
  originalText: string;
  evidence: ProposalEvidence;
  status: ProposalStatus;
  createdAt: EpochMillis;
  /** createdAt + 7 days: a proposal still pending then expires. */
  expiresAt: EpochMillis;
  decidedAt: EpochMillis | null;
  decidedBy: string | null;
  /** The user-verified memory an approval created. */
  promotedMemoryId: string | null;
  history: ProposalTransition[];
}
