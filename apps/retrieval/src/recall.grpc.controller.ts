import type { Metadata } from '@grpc/grpc-js';
import { resolveTenant, type TenantTokens } from '@engram/core';
import { Controller, Inject } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';
import { toRpcException } from './recall-errors';
import {
  recallInputFromMessage,
  recallResponseMessage,
  type RecallRequestMessage,
} from './recall-proto';
import { RecallService } from './recall.service';

/** DI token of the bearer-token → tenants map (null: requests name their tenant themselves). */
export const TENANT_TOKENS = Symbol('TENANT_TOKENS');

function authorizationOf(metadata: Metadata | undefined): string | undefined {
  const value = metadata?.get('authorization')[0];
  return typeof value === 'string' ? value : value?.toString('utf8');
}

/** The tenant a call may read: its bearer token's, checked against the one it names. */
export function requestTenant(
  tokens: TenantTokens | null,
  metadata: Metadata | undefined,
  scope: { tenantId?: string } | null | undefined,
): string {
  return resolveTenant(tokens, authorizationOf(metadata), scope?.tenantId);
}

/** engram.recall.v1.Recall/Recall over the @nestjs/microservices gRPC transport. */
@Controller()
export class RecallGrpcController {
  constructor(
    @Inject(RecallService) private readonly service: RecallService,
    @Inject(TENANT_TOKENS) private readonly tokens: TenantTokens | null,
  ) {}

  @GrpcMethod('Recall', 'Recall')
  async recall(request: RecallRequestMessage, metadata: Metadata) {
    try {
      const tenant = requestTenant(this.tokens, metadata, request.scope);
      const answer = await this.service.recall(recallInputFromMessage(request, tenant));
      return recallResponseMessage(answer);
    } catch (error) {
      throw toRpcException(error);
    }
  }
}
