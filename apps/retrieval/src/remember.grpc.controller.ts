import type { Metadata } from '@grpc/grpc-js';
import { feedbackNeeds, rememberNeeds, type TenantTokens } from '@engram/core';
import { Controller, Inject } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';
import { FeedbackService } from './feedback.service';
import { toRpcException } from './recall-errors';
import { requestTenant, type recallv1 } from '@engram/grpc';
import { TENANT_TOKENS } from './recall.grpc.controller';
import { RememberService } from './remember.service';

/** The request in the service's terms; the tenant is the one the caller's token resolved to. */
export function rememberInput(message: recallv1.RememberRequest__Output, tenantId: string) {
  return {
    tenantId,
    projectId: message.scope?.projectId ?? '',
    sessionId: message.sessionId ?? '',
    agentId: message.agentId ?? '',
    userId: message.userId ?? '',
    text: message.text ?? '',
    type: message.type ?? '',
    relatedFiles: message.relatedFiles ?? [],
  };
}

/** engram.recall.v1.Recall/Remember (the write rpcs: this and Feedback below). */
@Controller()
export class RememberGrpcController {
  constructor(
    @Inject(RememberService) private readonly service: RememberService,
    @Inject(TENANT_TOKENS) private readonly tokens: TenantTokens | null,
  ) {}

  @GrpcMethod('Recall', 'Remember')
  async remember(
    request: recallv1.RememberRequest__Output,
    metadata: Metadata,
  ): Promise<recallv1.RememberResponse__Output> {
    try {
      // A person's memory (userVerified at once) needs an admin token; an agent's note a write one.
      const needs = rememberNeeds(request);
      const tenant = requestTenant(this.tokens, metadata, request.scope, needs, 'Remember');
      return await this.service.remember(rememberInput(request, tenant));
    } catch (error) {
      throw toRpcException(error);
    }
  }
}

/** `FEEDBACK_ACTION_FLAG_WRONG` → `flag_wrong`; unspecified → '' (the core says it is required). */
function enumName(value: string | number | undefined, prefix: string): string {
  const name = String(value ?? '');
  if (name === `${prefix}UNSPECIFIED`) return '';
  return name.startsWith(prefix) ? name.slice(prefix.length).toLowerCase() : name;
}

export function feedbackInput(message: recallv1.FeedbackRequest__Output, tenantId: string) {
  return {
    tenantId,
    projectId: message.scope?.projectId ?? '',
    memoryId: message.memoryId ?? '',
    action: enumName(message.action, 'FEEDBACK_ACTION_'),
    reason: enumName(message.reason, 'CORRECTION_REASON_'),
    correctedContent: message.correctedContent ?? '',
    duplicateOfMemoryId: message.duplicateOfMemoryId ?? '',
    userId: message.userId ?? '',
  };
}

/** engram.recall.v1.Recall/Feedback. */
@Controller()
export class FeedbackGrpcController {
  constructor(
    @Inject(FeedbackService) private readonly service: FeedbackService,
    @Inject(TENANT_TOKENS) private readonly tokens: TenantTokens | null,
  ) {}

  @GrpcMethod('Recall', 'Feedback')
  async feedback(
    request: recallv1.FeedbackRequest__Output,
    metadata: Metadata,
  ): Promise<recallv1.FeedbackResponse__Output> {
    try {
      const input = feedbackInput(request, '');
      const needs = feedbackNeeds(input);
      const what = `Feedback ${input.action}${input.reason ? ` (${input.reason})` : ''}`;
      const tenant = requestTenant(this.tokens, metadata, request.scope, needs, what);
      return await this.service.feedback({ ...input, tenantId: tenant });
    } catch (error) {
      throw toRpcException(error);
    }
  }
}
