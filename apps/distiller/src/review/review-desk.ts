import type { Proposal, ProposalStatus, Typed } from '@engram/contracts';
import { PROPOSAL_STATUSES } from '@engram/contracts';
import {
  CompactedView,
  decideFrictionProposal,
  frictionRecordAt,
  type EventLogPort,
  type ReviewCommand,
  type TopicCodec,
} from '@engram/core';
import { reviewWork, type ReflectorWork } from '../reflector/reflector-work';

/** Why a review request could not be carried out; each maps to a gRPC status and an exit code. */
export type ReviewErrorCode = 'invalid' | 'not-found' | 'conflict' | 'timeout';

export class ReviewRequestError extends Error {
  constructor(
    readonly code: ReviewErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'ReviewRequestError';
  }
}

export type StatusFilter = ProposalStatus | 'all';

export interface ListQuery {
  tenantId: string;
  /** Absent or empty: every project of the tenant. */
  projectId?: string | null;
  /** Default pending. */
  status?: StatusFilter;
}

export interface DecisionRequest {
  tenantId: string;
  proposalId: string;
  action: ReviewCommand['action'];
  text?: string | null;
  reason?: string | null;
  by?: string | null;
}

export interface Decision {
  proposal: Proposal;
  /** False when the same decision had been taken already (nothing new was asked). */
  changed: boolean;
}

export interface ReviewDeskOptions {
  /** How long a decision waits for the reflector to record it (default 60 s). */
  timeoutMs?: number;
  /** How often it looks (default 250 ms). */
  pollMs?: number;
  clock?: () => number;
}

/**
 * The review workflow as the review API and `engram review` see it, on any event log (Kafka or
 * the embedded SQLite log): proposals are read from memory.proposals.v1 (compacted: each
 * proposal's latest state), and a decision is sent to the project's reflector — the only writer
 * of its proposals — through the reflector's work topic, then awaited on memory.proposals.v1.
 * The reflector applies it exactly once, so a decision sent twice changes nothing twice.
 * Friction proposals (`f-…`, written by the friction report) are listed and decided here too:
 * their decision is written directly (core's decideFrictionProposal), as no reflector owns them.
 */
export class ReviewDesk {
  private readonly proposals: CompactedView<Typed<'Proposal'>>;

  constructor(
    private readonly log: EventLogPort,
    private readonly codecs: {
      proposals: TopicCodec<Typed<'Proposal'>>;
      reflector: TopicCodec<ReflectorWork>;
    },
    private readonly options: ReviewDeskOptions = {},
  ) {
    this.proposals = new CompactedView(log, codecs.proposals);
  }

  /** The tenants that have proposals (for a caller that did not name one). */
  async tenants(): Promise<string[]> {
    await this.proposals.refresh();
    return [...new Set(this.proposals.values().map((p) => p.tenantId))].sort();
  }

  /**
   * The tenant's proposals (of one project, when given) with that status: the newest reflection
   * first, each reflection's in id order.
   */
  async list(query: ListQuery): Promise<Proposal[]> {
    const status = query.status ?? 'pending';
    if (status !== 'all' && !PROPOSAL_STATUSES.includes(status)) {
      throw new ReviewRequestError(
        'invalid',
        `status: one of ${[...PROPOSAL_STATUSES, 'all'].join(', ')}, not "${String(status)}"`,
      );
    }
    requireTenant(query.tenantId);
    await this.proposals.refresh();
    const now = this.now();
    return this.proposals
      .values()
      .map((p) => (p.kind === 'friction' ? frictionRecordAt(p, now) : p))
      .filter(
        (p) =>
          p.tenantId === query.tenantId &&
          (!query.projectId || p.projectId === query.projectId) &&
          (status === 'all' || p.status === status),
      )
      .sort((a, b) => b.createdAt - a.createdAt || (a.proposalId < b.proposalId ? -1 : 1));
  }

  /** One proposal of the tenant as it stands now (`engram review apply`); not-found otherwise. */
  async get(tenantId: string, proposalId: string): Promise<Proposal> {
    requireTenant(tenantId);
    const proposal = await this.find(tenantId, proposalId);
    return proposal.kind === 'friction' ? frictionRecordAt(proposal, this.now()) : proposal;
  }

  /**
   * Sends a decision and waits until the reflector has recorded it. The same decision again is
   * answered at once (`changed: false`); a different decision on a decided proposal, or one that
   * loses a race (the proposal expired meanwhile), is a conflict.
   */
  async decide(request: DecisionRequest): Promise<Decision> {
    requireTenant(request.tenantId);
    const text = request.text?.replace(/\s+/g, ' ').trim() ?? '';
    if (request.action === 'edit-and-approve' && text === '') {
      throw new ReviewRequestError('invalid', 'text: an edited proposal needs text');
    }
    const current = await this.find(request.tenantId, request.proposalId);
    if (current.kind === 'friction') return this.decideFriction(current, request);
    const wanted: ProposalStatus = request.action === 'reject' ? 'rejected' : 'approved';
    if (current.status !== 'pending') {
      const same =
        current.status === wanted &&
        (request.action !== 'edit-and-approve' || current.text === text);
      if (same) return { proposal: current, changed: false };
      throw conflict(current);
    }
    const command: ReviewCommand = {
      tenantId: current.tenantId,
      projectId: current.projectId,
      proposalId: current.proposalId,
      action: request.action,
      text: request.action === 'edit-and-approve' ? text : null,
      reason: request.reason?.trim() || null,
      by: request.by?.trim() || null,
      at: this.now(),
    };
    await this.log.publish(this.codecs.reflector, [reviewWork(command)]);
    const decided = await this.awaitDecision(current.proposalId);
    if (decided.status !== wanted) throw conflict(decided);
    return { proposal: decided, changed: true };
  }

  /**
   * A friction proposal has no reflector: the decision is its new record on memory.proposals.v1,
   * written here (and an expiry found on the way is written down before the conflict is said).
   */
  private async decideFriction(current: Proposal, request: DecisionRequest): Promise<Decision> {
    const decision = decideFrictionProposal(
      current,
      request.action,
      this.now(),
      request.by?.trim() || null,
    );
    const written = decision.ok ? decision.changed : decision.record !== current;
    if (written) {
      await this.log.publish(this.codecs.proposals, [
        { type: 'Proposal' as const, ...decision.record },
      ]);
    }
    if (!decision.ok) throw new ReviewRequestError(decision.code, decision.message);
    return { proposal: decision.record, changed: decision.changed };
  }

  private async find(tenantId: string, proposalId: string): Promise<Proposal> {
    await this.proposals.refresh();
    const proposal = this.proposals.get(proposalId);
    // Another tenant's proposal is "not found": its existence is not for this caller to learn.
    if (proposal === undefined || proposal.tenantId !== tenantId) {
      throw new ReviewRequestError('not-found', `no proposal ${proposalId} for tenant ${tenantId}`);
    }
    return proposal;
  }

  private async awaitDecision(proposalId: string): Promise<Proposal> {
    const deadline = this.now() + (this.options.timeoutMs ?? 60_000);
    for (;;) {
      await this.proposals.refresh();
      const proposal = this.proposals.get(proposalId)!;
      if (proposal.status !== 'pending') return proposal;
      if (this.now() > deadline) {
        throw new ReviewRequestError(
          'timeout',
          `the decision on ${proposalId} is queued but no reflector has recorded it yet ` +
            '(is the distiller running? `engram start`)',
        );
      }
      await new Promise((resolve) => setTimeout(resolve, this.options.pollMs ?? 250));
    }
  }

  private now(): number {
    return (this.options.clock ?? Date.now)();
  }
}

function requireTenant(tenantId: string): void {
  if (tenantId.trim() === '') {
    throw new ReviewRequestError('invalid', 'scope.tenant_id: required (the token allows several)');
  }
}

function conflict(proposal: Proposal): ReviewRequestError {
  return new ReviewRequestError(
    'conflict',
    `${proposal.proposalId} is already ${proposal.status}` +
      (proposal.decidedAt === null ? '' : ` (${new Date(proposal.decidedAt).toISOString()})`),
  );
}
