import type { Metadata } from '@grpc/grpc-js';
import type { TenantTokens } from '@engram/core';
import { Controller, Inject } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';
import { requestTenant, type recallv1 } from '@engram/grpc';
import { toRpcException } from './recall-errors';
import { TENANT_TOKENS } from './recall.grpc.controller';
import { ReviewQueueService } from './review-queue.service';

/**
 * engram.recall.v1.Recall/ListForReview: a read (a read token suffices), scoped like every rpc
 * to the tenant the caller's token resolves to; the decisions go through Feedback.
 */
@Controller()
export class ReviewQueueGrpcController {
  constructor(
    @Inject(ReviewQueueService) private readonly service: ReviewQueueService,
    @Inject(TENANT_TOKENS) private readonly tokens: TenantTokens | null,
  ) {}

  @GrpcMethod('Recall', 'ListForReview')
  async listForReview(
    request: recallv1.ListForReviewRequest__Output,
    metadata: Metadata,
  ): Promise<recallv1.ListForReviewResponse__Output> {
    try {
      const tenantId = requestTenant(this.tokens, metadata, request.scope);
      return await this.service.listForReview({
        tenantId,
        projectId: request.scope?.projectId ?? '',
        limit: request.limit ?? 0,
        pageToken: request.pageToken ?? '',
      });
    } catch (error) {
      throw toRpcException(error);
    }
  }
}
