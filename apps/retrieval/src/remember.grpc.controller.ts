import type { Metadata } from '@grpc/grpc-js';
import { feedbackNeeds, rememberNeeds, type TenantTokens } from '@engram/core';
import { Controller, Inject } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';
import { FeedbackService } from './feedback.service';
import { toRpcException } from './recall-errors';
import { requestTenant } from '@engram/grpc';
import { TENANT_TOKENS } from './recall.grpc.controller';
import { RememberService } from './remember.service';
import type { ScopeMessage } from './recall-proto';

export interface RememberRequestMessage {
  scope?: ScopeMessage | null;
  sessionId?: string;
  agentId?: string;
  userId?: string;
  text?: string;
  type?: string;
  relatedFiles?: string[];
}

/** The request in the service's terms; the tenant is the one the caller's token resolved to. */
export function rememberInput(message: RememberRequestMessage, tenantId: string) {
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
  async remember(request: RememberRequestMessage, metadata: Metadata) {
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

export interface FeedbackRequestMessage {
  scope?: ScopeMessage | null;
  memoryId?: string;
  action?: string | number;
  reason?: string | number;
  correctedContent?: string;
  duplicateOfMemoryId?: string;
  userId?: string;
}

/** `FEEDBACK_ACTION_FLAG_WRONG` → `flag_wrong`; unspecified → '' (the core says it is required). */
function enumName(value: string | number | undefined, prefix: string): string {
  const name = String(value ?? '');
  if (name === `${prefix}UNSPECIFIED`) return '';
  return name.startsWith(prefix) ? name.slice(prefix.length).toLowerCase() : name;
}

export function feedbackInput(message: FeedbackRequestMessage, tenantId: string) {
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
  async feedback(request: FeedbackRequestMessage, metadata: Metadata) {
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
