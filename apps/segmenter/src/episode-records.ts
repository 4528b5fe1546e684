import {
  SCHEMA_VERSION,
  type Episode,
  type EpisodeBoundaryEvent,
  type EventEnvelope,
  type ThreadLinkDecision,
} from '@engram/contracts';
import {
  uuidV5,
  type LinkDecisionRecord,
  type EpisodeAnnotation,
  type EpisodeSnapshot,
  type SegmenterOutput,
} from '@engram/core';

/** The agentId of records the segmenter derives (SPEC §3: the Engram service). */
export const SEGMENTER_AGENT_ID = 'engram-segmenter';

/**
 * Deterministic event ids: the same boundary (or the same version of an episode) always gets the
 * same eventId, so a downstream consumer can drop a duplicate by id.
 */
function derivedEventId(kind: string, episodeId: string, at: number): string {
  return uuidV5(`${kind}:${episodeId}:${at}`);
}

function envelopeOf(episode: EpisodeSnapshot, kind: string, at: number): EventEnvelope {
  return {
    eventId: derivedEventId(kind, episode.episodeId, at),
    tenantId: episode.tenantId,
    projectId: episode.projectId,
    sessionId: episode.sessionId,
    agentId: SEGMENTER_AGENT_ID,
    userId: episode.userId,
    timestamp: at,
    schemaVersion: SCHEMA_VERSION,
  };
}

/** A core output → its `memory.episode-boundaries.v1` record. */
export function boundaryRecord(output: SegmenterOutput): EpisodeBoundaryEvent {
  const { episode } = output;
  const common = {
    ...envelopeOf(episode, output.kind, output.at),
    episodeId: episode.episodeId,
    threadId: episode.threadId,
    firstPromptId: episode.firstPromptId,
    lastPromptId: episode.lastPromptId,
    intentKeywords: episode.intentKeywords,
    similarity: output.similarity,
    threshold: output.threshold,
  };
  if (output.kind === 'opened') {
    return {
      type: 'EpisodeOpened',
      ...common,
      reason: output.reason,
      parentEpisodeId: episode.parentEpisodeId,
    };
  }
  return {
    type: 'EpisodeClosed',
    ...common,
    reason: output.reason,
    userPromptCount: episode.userPromptCount,
  };
}

/** A closed episode and its annotation → the `memory.episodes.v1` record (SPEC §4.4). */
export function episodeRecord(
  output: Extract<SegmenterOutput, { kind: 'closed' }>,
  annotation: EpisodeAnnotation,
  crossThreadEpisodeIds: string[] = [],
): Episode & { type: 'Episode' } {
  const { episode } = output;
  return {
    type: 'Episode',
    ...envelopeOf(episode, 'episode', output.at),
    episodeId: episode.episodeId,
    threadId: episode.threadId,
    firstPromptId: episode.firstPromptId,
    lastPromptId: episode.lastPromptId,
    startedAt: episode.startedAt,
    endedAt: episode.endedAt,
    closeReason: output.reason,
    intentKeywords: episode.intentKeywords,
    intent: annotation.intent ?? episode.intent,
    obsCount: annotation.obsCount,
    investigate: annotation.investigate,
    execute: annotation.execute,
    failures: annotation.failures,
    hotFiles: annotation.hotFiles.map(({ path, touches }) => ({ path, touches })),
    durationMs: annotation.durationMs,
    toolsUsed: annotation.toolsUsed,
    participants: annotation.participants,
    entities: annotation.entities,
    outcome: annotation.outcome,
    tags: annotation.tags,
    keyDecisions: annotation.keyDecisions,
    parentEpisodeId: episode.parentEpisodeId,
    crossThreadEpisodeIds,
    summary: null,
    workUnitRef: null,
    sourceEventIds: episode.sourceEventIds,
  };
}

/** Where a linking decision happened: the new thread's first episode, in its session. */
export interface LinkContext {
  projectId: string;
  sessionId: string;
  newEpisodeId: string;
  linkedEpisodeId: string | null;
}

/** A cross-thread linking decision → its `memory.thread-links.v1` record. */
export function threadLinkRecord(
  decision: LinkDecisionRecord,
  context: LinkContext,
): ThreadLinkDecision & { type: 'ThreadLinkDecision' } {
  const { algorithmic, llm } = decision;
  return {
    type: 'ThreadLinkDecision',
    eventId: uuidV5(`thread-link:${decision.decisionId}`),
    tenantId: decision.tenantId,
    projectId: context.projectId,
    sessionId: context.sessionId,
    agentId: SEGMENTER_AGENT_ID,
    userId: decision.userId,
    timestamp: decision.decidedAt,
    schemaVersion: SCHEMA_VERSION,
    decisionId: decision.decisionId,
    newThreadId: decision.newThreadId,
    candidateThreadId: decision.candidateThreadId,
    newEpisodeId: context.newEpisodeId,
    linkedEpisodeId: context.linkedEpisodeId,
    decision: decision.decision,
    uncertain: decision.uncertain,
    decidedBy: decision.decidedBy,
    score: algorithmic.score,
    threshold: algorithmic.threshold,
    algorithmicConfidence: algorithmic.confidence,
    keywordScore: algorithmic.components.keyword,
    entityScore: algorithmic.components.entity,
    topicScore: algorithmic.components.topic,
    recencyScore: algorithmic.components.recency,
    topicMeasure: algorithmic.topicMeasure,
    hoursSinceActivity: algorithmic.hoursSinceActivity,
    llmStatus: decision.llmStatus,
    llmRelated: llm?.related ?? null,
    llmConfidence: llm?.confidence ?? null,
    llmReasoning: llm?.reasoning ?? null,
    outcome: decision.outcome,
    outcomeAt: decision.outcomeAt,
  };
}
