import type {
  AssembledContext,
  ContextItemKind,
  InjectionSelection,
  RankedMemory,
} from '@engram/core';
import type { recallv1 } from '@engram/grpc';
import type { BuildContextInput, InjectForFileInput, WorkflowRecipeInput } from './context.service';
import type {
  EpisodeChainAnswer,
  EpisodeSequenceInput,
  ScoredEpisodeHit,
} from './episode-history.service';
import {
  episodeItem,
  memoryItem,
  phaseFromEnum,
  provenanceMessage,
  scoreMessage,
} from './recall-proto';

// recall.proto's rpcs beside Recall ⇄ the services' inputs and answers (same loader options as
// recall-proto.ts: camelCase fields, enums as names, int64 as numbers, defaults filled in). The
// messages' types are generated from the proto (`recallv1`); requests are what a handler is given
// (`__Output`), answers are built complete in the same shape.

function scoped(scope: recallv1.Scope__Output | null | undefined, tenantId: string) {
  return { tenantId, projectId: scope?.projectId ?? '' };
}

export function injectForFileInput(
  message: recallv1.InjectForFileRequest__Output,
  tenantId: string,
): InjectForFileInput {
  return {
    ...scoped(message.scope, tenantId),
    filePath: message.filePath ?? '',
    toolName: message.toolName ?? '',
    phase: phaseFromEnum(message.phase),
    limit: message.limit ?? 0,
    sessionId: message.sessionId ?? '',
  };
}

export function buildContextInput(
  message: recallv1.BuildContextRequest__Output,
  tenantId: string,
): BuildContextInput {
  return {
    ...scoped(message.scope, tenantId),
    sessionId: message.sessionId ?? '',
    query: message.query ?? '',
    phase: phaseFromEnum(message.phase),
    tokenBudget: message.tokenBudget ?? 0,
  };
}

export function workflowRecipeInput(
  message: recallv1.GetWorkflowRecipeRequest__Output,
  tenantId: string,
): WorkflowRecipeInput {
  return {
    ...scoped(message.scope, tenantId),
    taskDescription: message.taskDescription ?? '',
    limit: message.limit ?? 0,
  };
}

export function episodeSequenceInput(
  // ReplayTopic asks the same without a minimum relevance (0: the default).
  message: recallv1.ReplayTopicRequest__Output &
    Partial<Pick<recallv1.GetEpisodeSequenceRequest__Output, 'minRelevance'>>,
  tenantId: string,
): EpisodeSequenceInput {
  return {
    ...scoped(message.scope, tenantId),
    topic: message.topic ?? '',
    limit: message.limit ?? 0,
    minRelevance: message.minRelevance ?? 0,
  };
}

export function episodeChainInput(
  message: recallv1.GetEpisodeChainRequest__Output,
  tenantId: string,
) {
  return { ...scoped(message.scope, tenantId), episodeId: message.episodeId ?? '' };
}

export function scoredMemoryMessage(ranked: RankedMemory): recallv1.ScoredMemory__Output {
  return {
    memory: memoryItem(ranked),
    scores: scoreMessage(ranked.score),
    provenance: provenanceMessage(ranked.provenance),
  };
}

export function injectForFileResponse(
  selection: InjectionSelection,
): recallv1.InjectForFileResponse__Output {
  return { memories: selection.memories.map(scoredMemoryMessage), rendered: selection.rendered };
}

export function contextItemKindToEnum(kind: ContextItemKind): recallv1.ContextItemKind__Output {
  // Every kind of the core must name a value of the proto's enum.
  return `CONTEXT_ITEM_KIND_${kind.toUpperCase()}` as `CONTEXT_ITEM_KIND_${Uppercase<ContextItemKind>}`;
}

export function buildContextResponse(
  context: AssembledContext,
): recallv1.BuildContextResponse__Output {
  return {
    items: context.items.map((item) => ({
      citationId: item.citationId,
      kind: contextItemKindToEnum(item.kind),
      text: item.text,
      tokens: item.tokens,
      scores: item.score ? scoreMessage(item.score) : null,
      provenance: provenanceMessage(item.provenance),
      relatedFiles: [...(item.relatedFiles ?? [])],
    })),
    rendered: context.rendered,
    tokensUsed: context.tokensUsed,
    truncated: context.truncated,
    threadId: context.threadId,
  };
}

export function workflowRecipeMessage(ranked: RankedMemory): recallv1.WorkflowRecipe__Output {
  const recipe = ranked.memory.workflowRecipe;
  return {
    ...scoredMemoryMessage(ranked),
    taskPattern: recipe?.taskPattern ?? '',
    steps: [...(recipe?.steps ?? [])]
      .sort((a, b) => a.order - b.order)
      .map((step) => ({
        order: step.order,
        description: step.description,
        canonicalFile: step.canonicalFile ?? '',
        canonicalLine: step.canonicalLine ?? 0,
      })),
    successCount: recipe?.successCount ?? 0,
    lastValidatedAtMs: recipe?.lastValidatedAt ?? 0,
  };
}

export function scoredEpisodeMessage(hit: ScoredEpisodeHit): recallv1.ScoredEpisode__Output {
  return {
    episode: episodeItem(hit.episode),
    scores: hit.score ? scoreMessage(hit.score) : null,
    provenance: provenanceMessage(hit.provenance),
  };
}

export function episodeChainResponse(
  answer: EpisodeChainAnswer,
): recallv1.GetEpisodeChainResponse__Output {
  return {
    episodes: answer.episodes.map(scoredEpisodeMessage),
    cycleDetected: answer.cycleDetected,
  };
}
