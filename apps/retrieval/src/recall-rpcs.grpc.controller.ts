import type { Metadata } from '@grpc/grpc-js';
import type { TenantTokens } from '@engram/core';
import { Controller, Inject } from '@nestjs/common';
import { GrpcMethod } from '@nestjs/microservices';
import { ContextService } from './context.service';
import { EpisodeHistoryService } from './episode-history.service';
import { toRpcException } from './recall-errors';
import {
  buildContextInput,
  buildContextResponse,
  episodeChainInput,
  episodeChainResponse,
  episodeSequenceInput,
  injectForFileInput,
  injectForFileResponse,
  scoredEpisodeMessage,
  workflowRecipeInput,
  workflowRecipeMessage,
} from './recall-rpcs-proto';
import { requestTenant, type recallv1 } from '@engram/grpc';
import { TENANT_TOKENS } from './recall.grpc.controller';

/**
 * One unary handler: the tenant from the token (refused before any work), the service call, the
 * answer as a message; any error as its gRPC status (INVALID_ARGUMENT names the field).
 */
async function handle<R extends { scope: recallv1.Scope__Output | null }, A>(
  tokens: TenantTokens | null,
  request: R,
  metadata: Metadata,
  work: (tenantId: string) => Promise<A>,
): Promise<A> {
  try {
    return await work(requestTenant(tokens, metadata, request.scope));
  } catch (error) {
    throw toRpcException(error);
  }
}

/** InjectForFile, BuildContext and GetWorkflowRecipe (the proactive rpcs). */
@Controller()
export class ContextGrpcController {
  constructor(
    @Inject(ContextService) private readonly context: ContextService,
    @Inject(TENANT_TOKENS) private readonly tokens: TenantTokens | null,
  ) {}

  @GrpcMethod('Recall', 'InjectForFile')
  injectForFile(
    request: recallv1.InjectForFileRequest__Output,
    metadata: Metadata,
  ): Promise<recallv1.InjectForFileResponse> {
    return handle(this.tokens, request, metadata, async (tenant) =>
      injectForFileResponse(await this.context.injectForFile(injectForFileInput(request, tenant))),
    );
  }

  @GrpcMethod('Recall', 'BuildContext')
  buildContext(
    request: recallv1.BuildContextRequest__Output,
    metadata: Metadata,
  ): Promise<recallv1.BuildContextResponse> {
    return handle(this.tokens, request, metadata, async (tenant) =>
      buildContextResponse(await this.context.buildContext(buildContextInput(request, tenant))),
    );
  }

  @GrpcMethod('Recall', 'GetWorkflowRecipe')
  getWorkflowRecipe(
    request: recallv1.GetWorkflowRecipeRequest__Output,
    metadata: Metadata,
  ): Promise<recallv1.GetWorkflowRecipeResponse> {
    return handle(this.tokens, request, metadata, async (tenant) => {
      const recipes = await this.context.workflowRecipes(workflowRecipeInput(request, tenant));
      return { recipes: recipes.map(workflowRecipeMessage) };
    });
  }
}

/** GetEpisodeSequence, GetEpisodeChain and ReplayTopic (seed 003). */
@Controller()
export class EpisodeHistoryGrpcController {
  constructor(
    @Inject(EpisodeHistoryService) private readonly history: EpisodeHistoryService,
    @Inject(TENANT_TOKENS) private readonly tokens: TenantTokens | null,
  ) {}

  @GrpcMethod('Recall', 'GetEpisodeSequence')
  getEpisodeSequence(
    request: recallv1.GetEpisodeSequenceRequest__Output,
    metadata: Metadata,
  ): Promise<recallv1.GetEpisodeSequenceResponse> {
    return handle(this.tokens, request, metadata, async (tenant) => {
      const episodes = await this.history.sequence(episodeSequenceInput(request, tenant));
      return { episodes: episodes.map(scoredEpisodeMessage) };
    });
  }

  @GrpcMethod('Recall', 'GetEpisodeChain')
  getEpisodeChain(
    request: recallv1.GetEpisodeChainRequest__Output,
    metadata: Metadata,
  ): Promise<recallv1.GetEpisodeChainResponse> {
    return handle(this.tokens, request, metadata, async (tenant) =>
      episodeChainResponse(await this.history.chain(episodeChainInput(request, tenant))),
    );
  }

  @GrpcMethod('Recall', 'ReplayTopic')
  replayTopic(
    request: recallv1.ReplayTopicRequest__Output,
    metadata: Metadata,
  ): Promise<recallv1.ReplayTopicResponse> {
    return handle(this.tokens, request, metadata, async (tenant) => {
      const replay = await this.history.replay(episodeSequenceInput(request, tenant));
      return { episodes: replay.episodes.map(scoredEpisodeMessage), rendered: replay.rendered };
    });
  }
}
