import type { Metadata } from '@grpc/grpc-js';
import type { TenantTokens } from '@engram/core';
import { Controller, Inject } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';
import { requestTenant, type recallv1 } from '@engram/grpc';
import { processMetrics } from '@engram/metrics';
import { toRpcException } from './recall-errors';
import { recallInputFromMessage, recallResponseMessage } from './recall-proto';
import { RecallService } from './recall.service';

/** DI token of the bearer-token → tenants map (null: requests name their tenant themselves). */
export const TENANT_TOKENS = Symbol('TENANT_TOKENS');

/** engram.recall.v1.Recall/Recall over the @nestjs/microservices gRPC transport. */
@Controller()
export class RecallGrpcController {
  constructor(
    @Inject(RecallService) private readonly service: RecallService,
    @Inject(TENANT_TOKENS) private readonly tokens: TenantTokens | null,
  ) {}

  @GrpcMethod('Recall', 'Recall')
  async recall(
    request: recallv1.RecallRequest__Output,
    metadata: Metadata,
  ): Promise<recallv1.RecallResponse> {
    try {
      return await processMetrics().timeRecall(async () => {
        const tenant = requestTenant(this.tokens, metadata, request.scope);
        const answer = await this.service.recall(recallInputFromMessage(request, tenant));
        return recallResponseMessage(answer);
      });
    } catch (error) {
      throw toRpcException(error);
    }
  }
}
