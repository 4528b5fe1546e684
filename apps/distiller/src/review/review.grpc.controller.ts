import type { Metadata } from '@grpc/grpc-js';
import { status } from '@grpc/grpc-js';
import { errorMessage, type TenantTokens } from '@engram/core';
import { Controller, Inject, Logger } from '@nestjs/common';
import { GrpcMethod, RpcException } from '@nestjs/microservices';
import { requestTenant, tenantAccessStatus, type reviewv1 } from '@engram/grpc';
import {
  ReviewDesk,
  ReviewRequestError,
  type DecisionRequest,
  type StatusFilter,
} from './review-desk';
import { proposalMessage } from './review-proto';

/** DI token of the bearer-token → tenants map (null: requests name their tenant themselves). */
export const REVIEW_TENANT_TOKENS = Symbol('REVIEW_TENANT_TOKENS');

const logger = new Logger('ReviewGrpc');

const CODES = {
  invalid: status.INVALID_ARGUMENT,
  'not-found': status.NOT_FOUND,
  conflict: status.FAILED_PRECONDITION,
  timeout: status.DEADLINE_EXCEEDED,
} as const;

/** The gRPC status of an error: the desk's codes, tenancy like the recall API, else INTERNAL. */
export function reviewStatusOf(error: unknown): { code: status; message: string } {
  if (error instanceof ReviewRequestError) {
    return { code: CODES[error.code], message: error.message };
  }
  const tenancy = tenantAccessStatus(error);
  if (tenancy) return tenancy;
  const message = `internal error: ${errorMessage(error)}`;
  logger.error(message, error instanceof Error ? error.stack : undefined);
  return { code: status.INTERNAL, message };
}

/** engram.review.v1.Review over the @nestjs/microservices gRPC transport. */
@Controller()
export class ReviewGrpcController {
  constructor(
    @Inject(ReviewDesk) private readonly desk: ReviewDesk,
    @Inject(REVIEW_TENANT_TOKENS) private readonly tokens: TenantTokens | null,
  ) {}

  @GrpcMethod('Review', 'List')
  async list(
    request: reviewv1.ListRequest__Output,
    metadata: Metadata,
  ): Promise<reviewv1.ListResponse__Output> {
    return this.answer(async () => {
      const proposals = await this.desk.list({
        tenantId: this.tenantOf(request, metadata),
        projectId: request.scope?.projectId ?? null,
        status: (request.status || 'pending') as StatusFilter,
      });
      return { proposals: proposals.map(proposalMessage) };
    });
  }

  @GrpcMethod('Review', 'Approve')
  approve(
    request: reviewv1.ApproveRequest__Output,
    metadata: Metadata,
  ): Promise<reviewv1.DecisionResponse__Output> {
    return this.decide(request, metadata, { action: 'approve' });
  }

  @GrpcMethod('Review', 'EditAndApprove')
  editAndApprove(
    request: reviewv1.EditAndApproveRequest__Output,
    metadata: Metadata,
  ): Promise<reviewv1.DecisionResponse__Output> {
    return this.decide(request, metadata, { action: 'edit-and-approve', text: request.text ?? '' });
  }

  @GrpcMethod('Review', 'Reject')
  reject(
    request: reviewv1.RejectRequest__Output,
    metadata: Metadata,
  ): Promise<reviewv1.DecisionResponse__Output> {
    return this.decide(request, metadata, { action: 'reject', reason: request.reason ?? null });
  }

  private decide(
    request: reviewv1.ApproveRequest__Output,
    metadata: Metadata,
    decision: Pick<DecisionRequest, 'action' | 'text' | 'reason'>,
  ): Promise<reviewv1.DecisionResponse__Output> {
    return this.answer(async () => {
      // Deciding a proposal changes what every agent of the tenant is told: a person's call.
      const tenantId = requestTenant(this.tokens, metadata, request.scope, 'admin', 'a decision');
      const proposalId = request.proposalId?.trim() ?? '';
      if (proposalId === '') throw new ReviewRequestError('invalid', 'proposal_id: required');
      const { proposal, changed } = await this.desk.decide({
        ...decision,
        tenantId,
        proposalId,
        by: request.reviewer ?? null,
      });
      return { proposal: proposalMessage(proposal), changed };
    });
  }

  private tenantOf(request: reviewv1.ListRequest__Output, metadata: Metadata): string {
    return requestTenant(this.tokens, metadata, request.scope);
  }

  private async answer<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw new RpcException(reviewStatusOf(error));
    }
  }
}
