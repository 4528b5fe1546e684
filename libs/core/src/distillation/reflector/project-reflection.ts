import type { EpochMillis } from '@engram/contracts';
import {
  applyReviewAction,
  type ReviewAction,
  type ReviewErrorCode,
  type ReviewOutcome,
} from '../proposals/review';
import type { ReviewProposal } from '../proposals/types';
import { isoDay, MS_PER_DAY } from '../time';
import type { Distillation } from '../types';
import type { ReflectionInput, ReflectionResult } from './extractive-reflector';
import { dayTokens, reflectionDecision, type ReflectionDecision } from './reflection-trigger';

/**
 * What the reflector keeps of one project (the distiller's reflector stage keeps it in a
 * compacted changelog keyed by project): the recent distillations, which of them were reflected,
 * every proposal with its review history, and when the project was last reflected (the
 * once-a-day guard). Pure data, JSON-safe.
 */
export interface ReflectorProjectState {
  v: 1;
  tenantId: string;
  projectId: string;
  /** Distillations kept for the next reflections, oldest first, one per dedupeKey. */
  distillations: Distillation[];
  /** dedupeKeys of the kept distillations a reflection has read. */
  reflected: string[];
  /** Every proposal (pending and decided): none is dropped while it can still change. */
  proposals: ReviewProposal[];
  lastReflectedAt: EpochMillis | null;
  /** The reflector's clock when the newest distillation arrived (absent in older records). */
  lastArrivalAt?: EpochMillis | null;
}

/** How much a project's state keeps (bounded, so one busy project cannot grow it for ever). */
export interface ReflectorRetention {
  /** Reflected distillations older than this (before `now`) leave the state. */
  keepDays: number;
  /** At most this many distillations (the oldest reflected ones go first). */
  maxDistillations: number;
  /** Decided proposals are kept this long after their decision (they dedupe new drafts). */
  keepDecidedDays: number;
}

export const DEFAULT_REFLECTOR_RETENTION: ReflectorRetention = {
  keepDays: 7,
  maxDistillations: 400,
  keepDecidedDays: 90,
};

/** A reviewer's decision as it travels to the reflector (the review API and `engram review`). */
export interface ReviewCommand {
  tenantId: string;
  projectId: string;
  proposalId: string;
  action: 'approve' | 'edit-and-approve' | 'reject';
  /** The reviewer's text (edit-and-approve). */
  text: string | null;
  reason: string | null;
  by: string | null;
  /** When the reviewer decided (epoch millis). */
  at: EpochMillis;
}

export function emptyReflectorState(tenantId: string, projectId: string): ReflectorProjectState {
  return {
    v: 1,
    tenantId,
    projectId,
    distillations: [],
    reflected: [],
    proposals: [],
    lastReflectedAt: null,
  };
}

/**
 * The state with one more distillation, or null when it is known already (a redelivered or
 * replayed distillation changes nothing).
 */
export function addDistillation(
  state: ReflectorProjectState,
  distillation: Distillation,
  arrivedAt: EpochMillis | null = null,
): ReflectorProjectState | null {
  if (state.distillations.some((d) => d.dedupeKey === distillation.dedupeKey)) return null;
  const distillations = [...state.distillations, distillation].sort(
    (a, b) => timeOf(a) - timeOf(b) || (a.dedupeKey < b.dedupeKey ? -1 : 1),
  );
  return { ...state, distillations, lastArrivalAt: arrivedAt };
}

/** Distillations no reflection has read yet. */
export function unreflected(state: ReflectorProjectState): Distillation[] {
  const read = new Set(state.reflected);
  return state.distillations.filter((d) => !read.has(d.dedupeKey));
}

export type ProjectReflectionDecision =
  ReflectionDecision | { due: false; day: string; reason: 'nothing-new' | 'still-arriving' };

export interface ReflectionSchedule {
  /** The daily reflection's UTC hour (default 6). */
  scheduledHourUtc?: number;
  /**
   * The scheduled reflection waits until no distillation arrived for this long (default 0), so
   * a burst (a replay, the end of a working session) is reflected as a whole, not its first part.
   */
  quietMs?: number;
}

/**
 * Whether the project reflects at `now`: only with distillations no reflection has read, then by
 * reflectionDecision — at most once per UTC day, as soon as the newest day's unread
 * distillations pass 40k tokens, else on the daily schedule once arrivals have paused.
 */
export function projectReflectionDecision(
  state: ReflectorProjectState,
  now: EpochMillis,
  schedule: ReflectionSchedule = {},
): ProjectReflectionDecision {
  const fresh = unreflected(state);
  const day = isoDay(now);
  if (fresh.length === 0) return { due: false, day, reason: 'nothing-new' };
  const newestDay = fresh.reduce<string | null>(
    (max, d) => (d.date !== null && (max === null || d.date > max) ? d.date : max),
    null,
  );
  const decision = reflectionDecision({
    now,
    dayTokens: newestDay === null ? 0 : dayTokens(fresh, newestDay),
    lastReflectedAt: state.lastReflectedAt,
    ...(schedule.scheduledHourUtc !== undefined && { scheduledHourUtc: schedule.scheduledHourUtc }),
  });
  const arrival = state.lastArrivalAt ?? null;
  const arriving = arrival !== null && now - arrival < (schedule.quietMs ?? 0);
  if (decision.due && decision.reason === 'daily-schedule' && arriving) {
    return { due: false, day, reason: 'still-arriving' };
  }
  return decision;
}

/** The reflector's input for the project at `now`: every kept distillation, every proposal. */
export function reflectionInputOf(state: ReflectorProjectState, now: EpochMillis): ReflectionInput {
  return {
    tenantId: state.tenantId,
    projectId: state.projectId,
    now,
    distillations: state.distillations,
    existingProposals: state.proposals,
    curatedMemories: state.proposals
      .filter((p) => p.status === 'approved')
      .map((p) => ({ content: p.text })),
  };
}

/** The state after a reflection at `now`: its proposals added, every distillation read. */
export function recordReflection(
  state: ReflectorProjectState,
  result: Pick<ReflectionResult, 'proposals'>,
  now: EpochMillis,
): ReflectorProjectState {
  return {
    ...state,
    proposals: [...state.proposals, ...result.proposals],
    reflected: state.distillations.map((d) => d.dedupeKey),
    lastReflectedAt: now,
  };
}

export type CommandOutcome =
  | { ok: true; state: ReflectorProjectState; outcome: Extract<ReviewOutcome, { ok: true }> }
  | { ok: false; code: 'unknown-proposal' | 'wrong-scope' | ReviewErrorCode; message: string };

/**
 * A reviewer's command applied (applyReviewAction): the decided proposal replaces the pending
 * one. A decision stamped before the proposal existed (clock skew between the reviewer and the
 * reflector) is taken at the proposal's creation instead.
 */
export function applyReviewCommand(
  state: ReflectorProjectState,
  command: ReviewCommand,
): CommandOutcome {
  if (command.tenantId !== state.tenantId || command.projectId !== state.projectId) {
    return { ok: false, code: 'wrong-scope', message: `${command.proposalId}: wrong project` };
  }
  const index = state.proposals.findIndex((p) => p.proposalId === command.proposalId);
  if (index < 0) {
    return {
      ok: false,
      code: 'unknown-proposal',
      message: `no proposal ${command.proposalId} in ${state.projectId}`,
    };
  }
  const proposal = state.proposals[index];
  const outcome = applyReviewAction(proposal, reviewActionOf(command, proposal.createdAt));
  if (!outcome.ok) return { ok: false, code: outcome.code, message: outcome.message };
  const proposals = [...state.proposals];
  proposals[index] = outcome.proposal;
  return { ok: true, state: { ...state, proposals }, outcome };
}

function reviewActionOf(command: ReviewCommand, createdAt: EpochMillis): ReviewAction {
  const at = Math.max(command.at, createdAt);
  switch (command.action) {
    case 'approve':
      return { kind: 'approve', at, by: command.by };
    case 'edit-and-approve':
      return { kind: 'edit-and-approve', at, by: command.by, text: command.text ?? '' };
    case 'reject':
      return { kind: 'reject', at, by: command.by, reason: command.reason };
  }
}

/** Pending proposals whose seven days are up at `now`, expired; the state with them. */
export function expireProjectProposals(
  state: ReflectorProjectState,
  now: EpochMillis,
): { state: ReflectorProjectState; expired: ReviewProposal[] } {
  const expired: ReviewProposal[] = [];
  const proposals = state.proposals.map((proposal) => {
    if (proposal.status !== 'pending' || now < proposal.expiresAt) return proposal;
    const outcome = applyReviewAction(proposal, { kind: 'expire', at: now });
    if (!outcome.ok) return proposal;
    expired.push(outcome.proposal);
    return outcome.proposal;
  });
  return { state: expired.length === 0 ? state : { ...state, proposals }, expired };
}

/**
 * The state within its retention at `now`: reflected distillations older than keepDays go (the
 * oldest reflected first when over maxDistillations; unread ones stay), decided proposals go
 * keepDecidedDays after their decision. Null when nothing goes.
 */
export function pruneReflectorState(
  state: ReflectorProjectState,
  now: EpochMillis,
  retention: ReflectorRetention = DEFAULT_REFLECTOR_RETENTION,
): ReflectorProjectState | null {
  const read = new Set(state.reflected);
  const horizon = now - retention.keepDays * MS_PER_DAY;
  let distillations = state.distillations.filter(
    (d) => !read.has(d.dedupeKey) || timeOf(d) >= horizon,
  );
  let excess = distillations.length - retention.maxDistillations;
  if (excess > 0) {
    // Oldest first: drop reflected ones until the count fits.
    distillations = distillations.filter((d) => {
      if (excess <= 0 || !read.has(d.dedupeKey)) return true;
      excess -= 1;
      return false;
    });
  }
  const decidedHorizon = now - retention.keepDecidedDays * MS_PER_DAY;
  const proposals = state.proposals.filter(
    (p) => p.decidedAt === null || p.decidedAt >= decidedHorizon,
  );
  if (
    distillations.length === state.distillations.length &&
    proposals.length === state.proposals.length
  ) {
    return null;
  }
  const kept = new Set(distillations.map((d) => d.dedupeKey));
  return {
    ...state,
    distillations,
    reflected: state.reflected.filter((key) => kept.has(key)),
    proposals,
  };
}

function timeOf(distillation: Distillation): EpochMillis {
  return distillation.lastEntryAt ?? distillation.triggerAt;
}
