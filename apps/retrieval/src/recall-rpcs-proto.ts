import type {
  AssembledContext,
  ContextItemKind,
  InjectionSelection,
  RankedMemory,
} from '@engram/core';
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
  type ScopeMessage,
} from './recall-proto';

// recall.proto's rpcs beside Recall ⇄ the services' inputs and answers (same loader options as
// recall-proto.ts: camelCase fields, enums as names, int64 as numbers, defaults filled in).

export interface InjectForFileRequestMessage {
  scope?: ScopeMessage | null;
  sessionId?: string;
  filePath?: string;
  toolName?: string;
  phase?: string | number;
  limit?: number;
}

export interface BuildContextRequestMessage {
  scope?: ScopeMessage | null;
  sessionId?: string;
  query?: string;
  phase?: string | number;
  tokenBudget?: number;
}

export interface GetWorkflowRecipeRequestMessage {
  scope?: ScopeMessage | null;
  taskDescription?: string;
  limit?: number;
}

export interface GetEpisodeSequenceRequestMessage {
  scope?: ScopeMessage | null;
  topic?: string;
  limit?: number;
  minRelevance?: number;
}

export interface ReplayTopicRequestMessage {
  scope?: ScopeMessage | null;
  topic?: string;
  limit?: number;
}

export interface GetEpisodeChainRequestMessage {
  scope?: ScopeMessage | null;
  episodeId?: string;
}

function scoped(scope: ScopeMessage | null | undefined, tenantId: string) {
  return { tenantId, projectId: scope?.projectId ?? '' };
}

export function injectForFileInput(
  message: InjectForFileRequestMessage,
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
  message: BuildContextRequestMessage,
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
  message: GetWorkflowRecipeRequestMessage,
  tenantId: string,
): WorkflowRecipeInput {
  return {
    ...scoped(message.scope, tenantId),
    taskDescription: message.taskDescription ?? '',
    limit: message.limit ?? 0,
  };
}

export function episodeSequenceInput(
  message: GetEpisodeSequenceRequestMessage & ReplayTopicRequestMessage,
  tenantId: string,
): EpisodeSequenceInput {
  return {
    ...scoped(message.scope, tenantId),
    topic: message.topic ?? '',
    limit: message.limit ?? 0,
    minRelevance: message.minRelevance ?? 0,
  };
}

export function episodeChainInput(message: GetEpisodeChainRequestMessage, tenantId: string) {
  return { ...scoped(message.scope, tenantId), episodeId: message.episodeId ?? '' };
}

export function scoredMemoryMessage(ranked: RankedMemory) {
  return {
    memory: memoryItem(ranked),
    scores: scoreMessage(ranked.score),
    provenance: provenanceMessage(ranked.provenance),
  };
}

export function injectForFileResponse(selection: InjectionSelection) {
  return { memories: selection.memories.map(scoredMemoryMessage), rendered: selection.rendered };
}

export function contextItemKindToEnum(kind: ContextItemKind): string {
  return `CONTEXT_ITEM_KIND_${kind.toUpperCase()}`;
}

export function buildContextResponse(context: AssembledContext) {
  return {
    items: context.items.map((item) => ({
      citationId: item.citationId,
      kind: contextItemKindToEnum(item.kind),
      text: item.text,
      tokens: item.tokens,
      scores: item.score ? scoreMessage(item.score) : null,
      provenance: provenanceMessage(item.provenance),
    })),
    rendered: context.rendered,
    tokensUsed: context.tokensUsed,
    truncated: context.truncated,
    threadId: context.threadId,
  };
}

export function workflowRecipeMessage(ranked: RankedMemory) {
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

export function scoredEpisodeMessage(hit: ScoredEpisodeHit) {
  return {
    episode: episodeItem(hit.episode),
    scores: hit.score ? scoreMessage(hit.score) : null,
    provenance: provenanceMessage(hit.provenance),
  };
}

export function episodeChainResponse(answer: EpisodeChainAnswer) {
  return {
    episodes: answer.episodes.map(scoredEpisodeMessage),
    cycleDetected: answer.cycleDetected,
  };
}
