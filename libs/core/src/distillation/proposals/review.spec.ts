import type { Memory, Proposal } from '@engram/contracts';
import { describe, expect, it } from 'vitest';
import { memoryIdOf } from '../memories';
import { renderMemoryMd } from '../memory-md';
import { reflectExtractively } from '../reflector/extractive-reflector';
import { REFLECT_AT, weekOfDistillations } from '../testing/reflector-fixtures';
import { fromProposalRecord, toProposalRecord } from './proposal-record';
import {
  applyReviewAction,
  expireDue,
  PROPOSAL_TTL_DAYS,
  transitionLogLine,
  type ReviewOutcome,
} from './review';
import type { ReviewProposal } from './types';

const DAY = 86_400_000;

function proposals(): ReviewProposal[] {
  return reflectExtractively({
    tenantId: 'acme',
    projectId: 'acme/api',
    now: REFLECT_AT,
    distillations: weekOfDistillations(),
  }).proposals;
}

function applied(outcome: ReviewOutcome): Extract<ReviewOutcome, { ok: true }> {
  if (!outcome.ok) throw new Error(outcome.message);
  return outcome;
}

describe('applyReviewAction', () => {
  const [pending] = proposals();

  it('should approve: a user-verified global memory is promoted, derived from the evidence', () => {
    const outcome = applied(
      applyReviewAction(pending, { kind: 'approve', at: REFLECT_AT + DAY, by: 'tim' }),
    );
    expect(outcome.changed).toBe(true);
    expect(outcome.proposal).toMatchObject({
      status: 'approved',
      decidedAt: REFLECT_AT + DAY,
      decidedBy: 'tim',
    });
    expect(outcome.promoted).toMatchObject({
      memoryType: 'preference',
      content: pending.text,
      userVerified: true,
      needsReview: false,
      scope: 'global',
      source: 'distilled',
      confidence: 0.95,
      decayHalfLifeDays: null,
      createdAt: REFLECT_AT + DAY,
      userId: 'tim',
      sourceEventIds: pending.evidence.eventIds,
      provenanceSessionIds: pending.evidence.sessionIds,
      tags: ['reviewed', 'section:user', `proposal:${pending.proposalId}`],
    });
    expect(outcome.promoted?.relations.map((r) => [r.relationType, r.targetMemoryId])).toEqual(
      pending.evidence.memoryIds.map((id) => ['derived_from', id]),
    );
    expect(outcome.proposal.promotedMemoryId).toBe(outcome.promoted?.memoryId);
    expect(outcome.proposal.history.map((t) => `${t.action}:${t.to}`)).toEqual([
      'create:pending',
      'approve:approved',
    ]);
    // The input is untouched.
    expect(pending.status).toBe('pending');
  });

  it("should edit-then-approve: the reviewer's text is promoted, the proposed text kept", () => {
    const outcome = applied(
      applyReviewAction(pending, {
        kind: 'edit-and-approve',
        at: REFLECT_AT + DAY,
        text: '  Small commits,\n conventional messages ',
        by: 'tim',
      }),
    );
    expect(outcome.proposal.text).toBe('Small commits, conventional messages');
    expect(outcome.proposal.originalText).toBe(pending.text);
    expect(outcome.promoted?.content).toBe('Small commits, conventional messages');
    expect(outcome.promoted?.memoryId).toBe(
      memoryIdOf('acme', 'acme/api', 'preference', 'Small commits, conventional messages'),
    );
    expect(outcome.transition?.note).toBe(`edited from: ${pending.text}`);
  });

  it('should reject with a reason and promote nothing', () => {
    const outcome = applied(
      applyReviewAction(pending, {
        kind: 'reject',
        at: REFLECT_AT + DAY,
        by: 'tim',
        reason: 'too specific',
      }),
    );
    expect(outcome.proposal.status).toBe('rejected');
    expect(outcome.promoted).toBeNull();
    expect(transitionLogLine(pending.proposalId, outcome.transition!)).toBe(
      'p-20260217-001 pending → rejected by tim at 2026-02-18T06:30:00.000Z (too specific)',
    );
  });

  it('should expire only after seven days', () => {
    const early = applyReviewAction(pending, { kind: 'expire', at: REFLECT_AT + 6 * DAY });
    expect(early).toMatchObject({ ok: false, code: 'not-yet-expired' });
    const outcome = applied(
      applyReviewAction(pending, { kind: 'expire', at: REFLECT_AT + PROPOSAL_TTL_DAYS * DAY }),
    );
    expect(outcome.proposal).toMatchObject({ status: 'expired', decidedBy: null });
  });

  it('should make a repeated decision a no-op and refuse a different one', () => {
    const approved = applied(
      applyReviewAction(pending, { kind: 'approve', at: REFLECT_AT + DAY, by: 'tim' }),
    ).proposal;
    const again = applied(
      applyReviewAction(approved, { kind: 'approve', at: REFLECT_AT + 2 * DAY, by: 'tim' }),
    );
    expect(again).toMatchObject({ changed: false, transition: null, promoted: null });
    expect(again.proposal).toBe(approved);
    expect(applyReviewAction(approved, { kind: 'reject', at: REFLECT_AT + 2 * DAY })).toMatchObject(
      { ok: false, code: 'already-decided' },
    );
    expect(applyReviewAction(approved, { kind: 'expire', at: REFLECT_AT + 9 * DAY })).toMatchObject(
      { ok: false, code: 'already-decided' },
    );
    expect(
      applyReviewAction(approved, {
        kind: 'edit-and-approve',
        at: REFLECT_AT + 2 * DAY,
        text: 'other',
      }),
    ).toMatchObject({
      ok: false,
      code: 'already-decided',
    });
  });

  it('should refuse an empty edit and a decision before the proposal existed', () => {
    expect(
      applyReviewAction(pending, { kind: 'edit-and-approve', at: REFLECT_AT, text: ' \n ' }),
    ).toMatchObject({ ok: false, code: 'empty-text' });
    expect(applyReviewAction(pending, { kind: 'approve', at: REFLECT_AT - 1 })).toMatchObject({
      ok: false,
      code: 'before-creation',
    });
  });
});

describe('the review workflow', () => {
  it('should never lose a proposal: each ends approved, rejected or expired, across a restart', () => {
    let store = new Map(proposals().map((p) => [p.proposalId, p]));
    const log: string[] = [];
    const promoted: Memory[] = [];
    const act = (id: string, action: Parameters<typeof applyReviewAction>[1]): void => {
      const outcome = applied(applyReviewAction(store.get(id)!, action));
      store.set(id, outcome.proposal);
      if (outcome.transition) log.push(transitionLogLine(id, outcome.transition));
      if (outcome.promoted) promoted.push(outcome.promoted);
    };
    act('p-20260217-001', { kind: 'approve', at: REFLECT_AT + DAY, by: 'tim' });
    act('p-20260217-003', {
      kind: 'edit-and-approve',
      at: REFLECT_AT + DAY,
      text: 'Run auth tests with --no-file-parallelism',
      by: 'tim',
    });
    act('p-20260217-005', { kind: 'reject', at: REFLECT_AT + 2 * DAY, by: 'tim' });

    // Restart: the distiller rebuilds its state from the compacted memory.proposals.v1 topic.
    const topic: Proposal[] = [...store.values()].map((p) => toProposalRecord(p));
    store = new Map(topic.map((record) => [record.proposalId, fromProposalRecord(record)!]));
    act('p-20260217-001', { kind: 'approve', at: REFLECT_AT + 3 * DAY, by: 'tim' }); // redelivered command

    for (const outcome of expireDue([...store.values()], REFLECT_AT + 8 * DAY)) {
      const expired = applied(outcome);
      store.set(expired.proposal.proposalId, expired.proposal);
      log.push(transitionLogLine(expired.proposal.proposalId, expired.transition!));
    }

    const statuses = [...store.values()].map((p) => p.status);
    expect(store.size).toBe(9);
    expect(statuses.filter((s) => s === 'approved')).toHaveLength(2);
    expect(statuses.filter((s) => s === 'rejected')).toHaveLength(1);
    expect(statuses.filter((s) => s === 'expired')).toHaveLength(6);
    expect(statuses).not.toContain('pending');
    expect(log).toHaveLength(9);
    expect(promoted).toHaveLength(2);
    expect(expireDue([...store.values()], REFLECT_AT + 30 * DAY)).toEqual([]);

    const md = renderMemoryMd(promoted, { projectId: 'acme/api' });
    expect(md).toContain(
      '## User\n\n- (2026-02-18) I prefer small commits with conventional commit messages.',
    );
    expect(md).toContain(
      '## Hard Rules\n\n- (2026-02-18) Run auth tests with --no-file-parallelism',
    );
  });

  it('should map a proposal to its memory.proposals.v1 record and back', () => {
    const [p] = proposals();
    const record = toProposalRecord(p);
    expect(record).toMatchObject({
      proposalId: 'p-20260217-001',
      kind: 'reflection',
      status: 'pending',
      section: 'User',
      target: null,
      text: p.text,
      title: p.title,
      evidenceMemoryIds: p.evidence.memoryIds,
      evidenceEventIds: p.evidence.eventIds,
      evidenceSessionIds: p.evidence.sessionIds,
      severity: null,
      expiresAt: p.expiresAt,
      timestamp: p.createdAt,
    });
    expect(toProposalRecord(p)).toEqual(record);
    expect(fromProposalRecord(record)).toEqual({ ...p, history: [] });
    expect(fromProposalRecord({ ...record, kind: 'friction' })).toBeNull();
    const decided = applied(
      applyReviewAction(p, { kind: 'reject', at: REFLECT_AT + DAY, by: 'tim' }),
    ).proposal;
    expect(toProposalRecord(decided).eventId).not.toBe(record.eventId);
  });
});
