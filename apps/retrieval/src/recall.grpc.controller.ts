import type { Metadata } from '@grpc/grpc-js';
import { status } from '@grpc/grpc-js';
import { resolveTenant, type TenantTokens } from '@engram/core';
import { Controller, Inject } from '@nestjs/common';
import { GrpcMethod, RpcException } from '@nestjs/microservices';
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
      const tenant = resolveTenant(this.tokens, authorizationOf(metadata), request.scope?.tenantId);
      const answer = await this.service.recall(recallInputFromMessage(request, tenant));
      return recallResponseMessage(answer);
    } catch (error) {
      throw toRpcException(error);
    }
  }
}

function unimplemented(rpc: string): never {
  throw new RpcException({
    code: status.UNIMPLEMENTED,
    message: `${rpc} is not implemented by this server yet (engram.recall.v1 serves Recall and GetFileNeighbors today)`,
  });
}

/**
 * The other rpcs of recall.proto, answered UNIMPLEMENTED with a message saying so (instead of
 * grpc-js's generic one). GetFileNeighbors is FileNeighborsGrpcController's (when the server has
 * the graph) and deliberately absent here.
 * Delete a method from this class when its real handler lands.
 */
@Controller()
export class RecallPendingRpcsController {
  @GrpcMethod('Recall', 'InjectForFile')
  injectForFile(): never {
    return unimplemented('InjectForFile');
  }

  @GrpcMethod('Recall', 'BuildContext')
  buildContext(): never {
    return unimplemented('BuildContext');
  }

  @GrpcMethod('Recall', 'GetEpisodeSequence')
  getEpisodeSequence(): never {
    return unimplemented('GetEpisodeSequence');
  }

  @GrpcMethod('Recall', 'GetEpisodeChain')
  getEpisodeChain(): never {
    return unimplemented('GetEpisodeChain');
  }

  @GrpcMethod('Recall', 'ReplayTopic')
  replayTopic(): never {
    return unimplemented('ReplayTopic');
  }

  @GrpcMethod('Recall', 'GetWorkflowRecipe')
  getWorkflowRecipe(): never {
    return unimplemented('GetWorkflowRecipe');
  }

  @GrpcMethod('Recall', 'Remember')
  remember(): never {
    return unimplemented('Remember');
  }

  @GrpcMethod('Recall', 'Feedback')
  feedback(): never {
    return unimplemented('Feedback');
  }

  @GrpcMethod('Recall', 'AnalyzeImpact')
  analyzeImpact(): never {
    return unimplemented('AnalyzeImpact');
  }
}
