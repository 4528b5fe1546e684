import type { EpochMillis, Memory, ProposalStatus } from '@engram/contracts';
import { MS_PER_DAY } from '../time';
import { promotedMemory } from './promotion';
import type { ProposalTransition, ReviewActionKind, ReviewProposal } from './types';

/** Unreviewed proposals expire after this many days (seed 001 Phase 3). */
export const PROPOSAL_TTL_DAYS = 7;

export type ReviewAction =
  | { kind: 'approve'; at: EpochMillis; by?: string | null }
  | { kind: 'edit-and-approve'; at: EpochMillis; text: string; by?: string | null }
  | { kind: 'reject'; at: EpochMillis; by?: string | null; reason?: string | null }
  | { kind: 'expire'; at: EpochMillis };

export type ReviewErrorCode =
  'already-decided' | 'not-yet-expired' | 'empty-text' | 'before-creation';

export type ReviewOutcome =
  | {
      ok: true;
      /** False when the action repeats the decision already taken (a redelivered command). */
      changed: boolean;
      proposal: ReviewProposal;
      /** The transition just logged, or null when nothing changed. */
      transition: ProposalTransition | null;
      /** The user-verified memory an approval created (null otherwise). */
      promoted: Memory | null;
    }
  | { ok: false; code: ReviewErrorCode; message: string; proposal: ReviewProposal };

const RESULT_OF: Readonly<Record<ReviewActionKind, ProposalStatus>> = {
  approve: 'approved',
  'edit-and-approve': 'approved',
  reject: 'rejected',
  expire: 'expired',
};

/**
 * The review state machine: pending → approved (approve, or edit-then-approve: the reviewer's
 * text replaces the proposed one and is what gets promoted) | rejected | expired (at or after
 * `expiresAt`). Decided proposals never change again, and none is ever dropped: every proposal
 * ends approved, rejected or expired, each step logged in `history`. Repeating the decision
 * already taken is a no-op (`changed: false`), so redelivered commands are harmless. Pure: the
 * input proposal is not modified.
 */
export function applyReviewAction(proposal: ReviewProposal, action: ReviewAction): ReviewOutcome {
  const target = RESULT_OF[action.kind];
  const text =
    action.kind === 'edit-and-approve' ? action.text.replace(/\s+/g, ' ').trim() : proposal.text;
  if (action.kind === 'edit-and-approve' && text === '') {
    return failure(proposal, 'empty-text', `${proposal.proposalId}: an edited proposal needs text`);
  }
  if (action.at < proposal.createdAt) {
    return failure(
      proposal,
      'before-creation',
      `${proposal.proposalId}: a decision cannot precede the proposal`,
    );
  }
  if (proposal.status !== 'pending') {
    if (proposal.status === target && text === proposal.text) {
      return { ok: true, changed: false, proposal, transition: null, promoted: null };
    }
    return failure(
      proposal,
      'already-decided',
      `${proposal.proposalId} is already ${proposal.status}; it cannot become ${target}`,
    );
  }
  if (action.kind === 'expire' && action.at < proposal.expiresAt) {
    return failure(
      proposal,
      'not-yet-expired',
      `${proposal.proposalId} expires at ${new Date(proposal.expiresAt).toISOString()}`,
    );
  }
  const by = action.kind === 'expire' ? null : (action.by ?? null);
  const transition: ProposalTransition = {
    action: action.kind,
    from: 'pending',
    to: target,
    at: action.at,
    by,
    note: noteOf(action, proposal),
  };
  const decided: ReviewProposal = {
    ...proposal,
    text,
    status: target,
    decidedAt: action.at,
    decidedBy: by,
    history: [...proposal.history, transition],
  };
  if (target !== 'approved') {
    return { ok: true, changed: true, proposal: decided, transition, promoted: null };
  }
  const promoted = promotedMemory(decided, action.at, by);
  return {
    ok: true,
    changed: true,
    proposal: { ...decided, promotedMemoryId: promoted.memoryId },
    transition,
    promoted,
  };
}

function noteOf(action: ReviewAction, proposal: ReviewProposal): string | null {
  switch (action.kind) {
    case 'edit-and-approve':
      return `edited from: ${proposal.text}`;
    case 'reject':
      return action.reason ?? null;
    case 'expire':
      return `unreviewed for ${PROPOSAL_TTL_DAYS} days`;
    case 'approve':
      return null;
  }
}

function failure(proposal: ReviewProposal, code: ReviewErrorCode, message: string): ReviewOutcome {
  return { ok: false, code, message, proposal };
}

/** Every pending proposal whose time is up at `now`, expired (the daily sweep). */
export function expireDue(proposals: readonly ReviewProposal[], now: EpochMillis): ReviewOutcome[] {
  return proposals
    .filter((proposal) => proposal.status === 'pending' && now >= proposal.expiresAt)
    .map((proposal) => applyReviewAction(proposal, { kind: 'expire', at: now }));
}

/** When a proposal created at `createdAt` expires. */
export function expiryOf(createdAt: EpochMillis): EpochMillis {
  return createdAt + PROPOSAL_TTL_DAYS * MS_PER_DAY;
}

/**
 * One line of the review log:
 * `p-20260215-001 pending → approved by tim at 2026-02-16T09:00:00.000Z`.
 */
export function transitionLogLine(proposalId: string, transition: ProposalTransition): string {
  const from = transition.from === null ? 'new' : transition.from;
  const by = transition.by === null ? '' : ` by ${transition.by}`;
  const note = transition.note === null ? '' : ` (${transition.note})`;
  return `${proposalId} ${from} → ${transition.to}${by} at ${new Date(transition.at).toISOString()}${note}`;
}
