import type { Episode, Memory, PromptSubmitted } from '@engram/contracts';
import { NO_MEMORY_DETAILS } from '../../memory';
import type { ThreadTurn } from '../context-sources';

/** Test builders for the retrieval specs (not exported from the library). */

export const DAY = 24 * 60 * 60 * 1000;
export const NOW = Date.UTC(2026, 2, 3, 12, 0, 0);
export const SCOPE = { tenantId: 'tenant-a', projectId: 'repo-a' } as const;
export const MODEL = 'all-minilm-l6-v2-q@test';

export function memory(overrides: Partial<Memory> & { memoryId: string }): Memory {
  return {
    eventId: `event-${overrides.memoryId}`,
    tenantId: SCOPE.tenantId,
    projectId: SCOPE.projectId,
    sessionId: 'session-1',
    agentId: 'engram-observer',
    userId: null,
    timestamp: NOW - DAY,
    schemaVersion: 1,
    memoryType: 'gotcha',
    content: `content of ${overrides.memoryId}`,
    confidence: 0.8,
    tags: [],
    relatedFiles: [],
    relatedModules: [],
    createdAt: NOW - 10 * DAY,
    lastAccessedAt: NOW,
    accessCount: 0,
    workUnitRef: null,
    scope: 'module',
    source: 'observer_inferred',
    episodeId: null,
    commitSha: null,
    provenanceSessionIds: [],
    sourceEventIds: [],
    targetNodeId: null,
    relations: [],
    decayHalfLifeDays: null,
    needsReview: false,
    userVerified: false,
    citationText: null,
    staleAt: null,
    embedding: null,
    embeddingModel: null,
    ...NO_MEMORY_DETAILS,
    ...overrides,
  };
}

export function episode(overrides: Partial<Episode> & { episodeId: string }): Episode {
  return {
    eventId: `event-${overrides.episodeId}`,
    tenantId: SCOPE.tenantId,
    projectId: SCOPE.projectId,
    sessionId: 'session-1',
    agentId: 'engram-segmenter',
    userId: 'user-1',
    timestamp: NOW - DAY,
    schemaVersion: 1,
    threadId: 'thread-old',
    firstPromptId: 1,
    lastPromptId: 3,
    startedAt: NOW - 2 * DAY,
    endedAt: NOW - 2 * DAY + 60_000,
    closeReason: 'thread_inactivity',
    intentKeywords: ['weather', 'new', 'york'],
    intent: null,
    obsCount: 0,
    investigate: 0,
    execute: 0,
    failures: 0,
    hotFiles: [],
    durationMs: 60_000,
    toolsUsed: [],
    participants: [],
    entities: [],
    outcome: 'success',
    tags: [],
    keyDecisions: [],
    parentEpisodeId: null,
    crossThreadEpisodeIds: [],
    summary: null,
    workUnitRef: null,
    sourceEventIds: [],
    ...overrides,
  };
}

/** A user prompt as the turns tier indexes it. */
export function prompt(overrides: Partial<PromptSubmitted> & { eventId: string }): PromptSubmitted {
  return {
    tenantId: SCOPE.tenantId,
    projectId: SCOPE.projectId,
    sessionId: 'session-1',
    agentId: 'claude-code',
    userId: 'user-1',
    timestamp: NOW,
    schemaVersion: 1,
    promptId: 1,
    source: 'user',
    channel: 'cli',
    channelKind: 'explicit',
    explicitThreadId: null,
    text: `prompt ${overrides.eventId}`,
    methodology: null,
    methodologyPhase: null,
    workUnitRef: null,
    parentEpisodeId: null,
    ...overrides,
  };
}

export function turn(overrides: Partial<ThreadTurn> & { eventId: string }): ThreadTurn {
  return {
    tenantId: SCOPE.tenantId,
    projectId: SCOPE.projectId,
    sessionId: 'session-2',
    promptId: 1,
    threadId: 'thread-now',
    episodeId: null,
    text: `turn ${overrides.eventId}`,
    timestamp: NOW,
    ...overrides,
  };
}

/** The error `fn` throws (undefined when it returns), so specs can assert on its fields. */
export function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return undefined;
}
