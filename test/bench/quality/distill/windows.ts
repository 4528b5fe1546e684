import type { EpisodeClosed } from '@engram/contracts';
import {
  distillationWindow,
  type DistillationWindow,
} from '../../../../libs/core/src/distillation/triggers';
import type { DistillPrompt, DistillToolCall } from '../../../../libs/core/src/distillation/types';

/**
 * The window an EpisodeClosed over `firstPromptId..lastPromptId` gives (one segment), as the
 * distiller service builds it for each episode the segmenter closes.
 */
export function episodeWindow(
  scope: { tenantId: string; projectId: string; sessionId: string },
  prompts: readonly DistillPrompt[],
  toolCalls: readonly DistillToolCall[],
  firstPromptId: number,
  lastPromptId: number,
): DistillationWindow {
  const inRange = (e: { promptId: number }) =>
    e.promptId >= firstPromptId && e.promptId <= lastPromptId;
  const times = [...prompts, ...toolCalls].filter(inRange).map((e) => e.timestamp);
  const closedAt = Math.max(0, ...times) + 1000;
  const event: EpisodeClosed = {
    eventId: `${scope.sessionId}-closed-${firstPromptId}`,
    tenantId: scope.tenantId,
    projectId: scope.projectId,
    sessionId: scope.sessionId,
    agentId: 'claude-code',
    userId: null,
    timestamp: closedAt,
    schemaVersion: 1,
    episodeId: `${scope.sessionId}-e${firstPromptId}`,
    threadId: `${scope.sessionId}-thread`,
    firstPromptId,
    lastPromptId,
    intentKeywords: [],
    reason: 'session_end',
    similarity: null,
    threshold: null,
    userPromptCount: prompts.filter((p) => inRange(p) && p.source === 'user').length,
  };
  const decision = distillationWindow({ kind: 'EpisodeClosed', event }, { prompts, toolCalls });
  if (decision.kind !== 'distill') {
    throw new Error(`${scope.sessionId} ${firstPromptId}..${lastPromptId}: ${decision.reason}`);
  }
  return decision.window;
}
