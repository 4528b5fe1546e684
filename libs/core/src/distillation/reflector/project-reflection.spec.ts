import { describe, expect, it } from 'vitest';
import { MS_PER_DAY } from '../time';
import { REFLECT_AT, weekOfDistillations } from '../testing/reflector-fixtures';
import type { Distillation } from '../types';
import { reflectExtractively } from './extractive-reflector';
import {
  addDistillation,
  applyReviewCommand,
  emptyReflectorState,
  expireProjectProposals,
  projectReflectionDecision,
  pruneReflectorState,
  recordReflection,
  reflectionInputOf,
  unreflected,
  type ReflectorProjectState,
  type ReviewCommand,
} from './project-reflection';

const HOUR = 3_600_000;

function withWeek(): ReflectorProjectState {
  return weekOfDistillations().reduce(
    (state, d) => addDistillation(state, d) ?? state,
    emptyReflectorState('acme', 'acme/api'),
  );
}

function reflected(at = REFLECT_AT): ReflectorProjectState {
  const state = withWeek();
  return recordReflection(state, reflectExtractively(reflectionInputOf(state, at)), at);
}

const command = (overrides: Partial<ReviewCommand> = {}): ReviewCommand => ({
  tenantId: 'acme',
  projectId: 'acme/api',
  proposalId: 'p-20260217-001',
  action: 'approve',
  text: null,
  reason: null,
  by: 'tim',
  at: REFLECT_AT + HOUR,
  ...overrides,
});

describe('the reflector state of a project', () => {
  it('should keep each distillation once, in time order, whatever the delivery order', () => {
    const state = withWeek();
    expect(state.distillations.map((d) => d.sessionId)).toEqual([
      'sess-old',
      'sess-debug',
      'sess-review',
    ]);
    expect(addDistillation(state, weekOfDistillations()[0])).toBeNull();
    const reversed = weekOfDistillations()
      .reverse()
      .reduce((s, d) => addDistillation(s, d) ?? s, emptyReflectorState('acme', 'acme/api'));
    expect(reversed).toEqual(state);
  });

  it('should reflect on the daily schedule, once a day, and only with something new', () => {
    const state = withWeek();
    const beforeHour = Date.UTC(2026, 1, 17, 5, 59);
    expect(projectReflectionDecision(state, beforeHour)).toMatchObject({
      due: false,
      reason: 'not-yet',
    });
    expect(projectReflectionDecision(state, beforeHour, { scheduledHourUtc: 5 })).toMatchObject({
      due: true,
      reason: 'daily-schedule',
    });
    expect(projectReflectionDecision(state, REFLECT_AT)).toMatchObject({
      due: true,
      reason: 'daily-schedule',
      day: '2026-02-17',
    });
    const after = reflected();
    expect(unreflected(after)).toEqual([]);
    expect(projectReflectionDecision(after, REFLECT_AT + MS_PER_DAY)).toMatchObject({
      due: false,
      reason: 'nothing-new',
    });
    const [extra] = weekOfDistillations();
    const more = addDistillation(after, { ...extra, dedupeKey: 'new-one' })!;
    expect(projectReflectionDecision(more, REFLECT_AT + HOUR)).toMatchObject({
      due: false,
      reason: 'already-reflected-today',
    });
    expect(projectReflectionDecision(more, REFLECT_AT + MS_PER_DAY)).toMatchObject({ due: true });
  });

  it('should hold the scheduled reflection while distillations keep arriving', () => {
    const [debug] = weekOfDistillations();
    const state = addDistillation(emptyReflectorState('acme', 'acme/api'), debug, REFLECT_AT)!;
    const quiet = { quietMs: 60_000 };
    expect(projectReflectionDecision(state, REFLECT_AT + 59_999, quiet)).toMatchObject({
      due: false,
      reason: 'still-arriving',
    });
    expect(projectReflectionDecision(state, REFLECT_AT + 60_000, quiet)).toMatchObject({
      due: true,
      reason: 'daily-schedule',
    });
  });

  it("should reflect before the hour when the newest day's unread distillations pass 40k tokens", () => {
    const [debug] = weekOfDistillations();
    const huge: Distillation = {
      ...debug,
      dedupeKey: 'huge',
      segments: [{ ...debug.segments[0], narrative: 'x'.repeat(41_000 * 4) }],
    };
    const state = addDistillation(emptyReflectorState('acme', 'acme/api'), huge)!;
    expect(
      projectReflectionDecision(state, Date.UTC(2026, 1, 16, 12, 0), { scheduledHourUtc: 23 }),
    ).toMatchObject({
      due: true,
      reason: 'token-threshold',
    });
    const small = addDistillation(emptyReflectorState('acme', 'acme/api'), debug)!;
    expect(
      projectReflectionDecision(small, Date.UTC(2026, 1, 16, 12, 0), { scheduledHourUtc: 23 }),
    ).toMatchObject({
      due: false,
      reason: 'not-yet',
    });
    expect(
      projectReflectionDecision(small, Date.UTC(2026, 1, 16, 23, 0), { scheduledHourUtc: 23 }),
    ).toMatchObject({
      due: true,
      reason: 'daily-schedule',
    });
  });

  it('should apply a reviewer command to its proposal only, and refuse what does not fit', () => {
    const state = reflected();
    const approved = applyReviewCommand(state, command());
    if (!approved.ok) throw new Error(approved.message);
    expect(approved.outcome.promoted?.userVerified).toBe(true);
    expect(approved.state.proposals.filter((p) => p.status === 'approved')).toHaveLength(1);
    expect(applyReviewCommand(state, command({ proposalId: 'p-20260217-099' }))).toMatchObject({
      ok: false,
      code: 'unknown-proposal',
    });
    expect(applyReviewCommand(state, command({ tenantId: 'evil' }))).toMatchObject({
      ok: false,
      code: 'wrong-scope',
    });
    expect(applyReviewCommand(approved.state, command({ action: 'reject' }))).toMatchObject({
      ok: false,
      code: 'already-decided',
    });
    // A reviewer's clock behind the reflector's: decided at the proposal's creation instead.
    const skewed = applyReviewCommand(state, command({ at: REFLECT_AT - HOUR }));
    expect(skewed.ok && skewed.outcome.proposal.decidedAt).toBe(REFLECT_AT);
  });

  it('should expire pending proposals after seven days and leave decided ones alone', () => {
    const state = reflected();
    const decided = applyReviewCommand(state, command({ action: 'reject', reason: 'no' }));
    if (!decided.ok) throw new Error(decided.message);
    expect(expireProjectProposals(decided.state, REFLECT_AT + 6 * MS_PER_DAY).expired).toEqual([]);
    const { state: after, expired } = expireProjectProposals(
      decided.state,
      REFLECT_AT + 7 * MS_PER_DAY,
    );
    expect(expired).toHaveLength(state.proposals.length - 1);
    expect(after.proposals.map((p) => p.status).sort()).toEqual(
      [...Array<string>(state.proposals.length - 1).fill('expired'), 'rejected'].sort(),
    );
  });

  it('should prune read distillations past their retention, never unread ones', () => {
    const state = reflected();
    expect(pruneReflectorState(state, REFLECT_AT)).toBeNull();
    const later = pruneReflectorState(state, REFLECT_AT + 8 * MS_PER_DAY)!;
    expect(later.distillations).toEqual([]);
    expect(later.reflected).toEqual([]);
    expect(later.proposals).toHaveLength(state.proposals.length);
    const unread = withWeek();
    expect(pruneReflectorState(unread, REFLECT_AT + 30 * MS_PER_DAY)).toBeNull();
    const capped = pruneReflectorState(state, REFLECT_AT, {
      keepDays: 7,
      maxDistillations: 1,
      keepDecidedDays: 90,
    })!;
    expect(capped.distillations.map((d) => d.sessionId)).toEqual(['sess-review']);
  });
});
