import type { Episode, Memory, PromptSubmitted } from '@engram/contracts';
import { NO_MEMORY_DETAILS, type Delivered } from '@engram/core';
import type { DeliveredTombstone } from '@engram/core';
import { prompt as userPrompt } from '../../../../libs/core/src/retrieval/testing/fixtures';

// Builders of contract records for the indexer's specs and integration test (not exported from
// the app). Every field set, nothing random: the same call gives the same record.

export const T0 = Date.UTC(2026, 0, 15, 9, 0, 0);
export const TENANT = 'acme';
export const PROJECT = 'acme/api';

export function memoryRecord(overrides: Partial<Memory> & { memoryId: string }): Memory {
  return {
    eventId: `event-${overrides.memoryId}`,
    tenantId: TENANT,
    projectId: PROJECT,
    sessionId: 'session-1',
    agentId: 'engram-observer',
    userId: null,
    timestamp: T0,
    schemaVersion: 1,
    memoryType: 'gotcha',
    content: `content of ${overrides.memoryId}`,
    confidence: 0.8,
    tags: ['auth'],
    relatedFiles: ['src/auth/refresh.ts'],
    relatedModules: ['auth'],
    createdAt: T0 - 86_400_000,
    lastAccessedAt: T0,
    accessCount: 2,
    workUnitRef: null,
    scope: 'module',
    source: 'observer_inferred',
    episodeId: 'episode-1',
    commitSha: null,
    provenanceSessionIds: ['session-2'],
    sourceEventIds: [`source-${overrides.memoryId}`],
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

/**
 * A user-verified observer gotcha about one file, created and last seen at `at`, never returned
 * yet: the memory the staleness specs (embedded and on the servers) move and mark stale.
 */
export function fileGotcha(
  scope: { tenantId: string; projectId: string },
  memoryId: string,
  content: string,
  file: string,
  at: number,
): Memory {
  return memoryRecord({
    memoryId,
    ...scope,
    sessionId: 'session-0',
    timestamp: at,
    content,
    confidence: 0.9,
    tags: ['observer'],
    relatedFiles: [file],
    relatedModules: ['src/auth'],
    createdAt: at,
    lastAccessedAt: at,
    accessCount: 0,
    episodeId: null,
    provenanceSessionIds: ['session-0'],
    sourceEventIds: [],
    userVerified: true,
  });
}

export function episodeRecord(overrides: Partial<Episode> & { episodeId: string }): Episode {
  return {
    eventId: `event-${overrides.episodeId}`,
    tenantId: TENANT,
    projectId: PROJECT,
    sessionId: 'session-1',
    agentId: 'engram-segmenter',
    userId: 'user-1',
    timestamp: T0,
    schemaVersion: 1,
    threadId: 'thread-1',
    firstPromptId: 1,
    lastPromptId: 4,
    startedAt: T0 - 600_000,
    endedAt: T0,
    closeReason: 'intent_shift',
    intentKeywords: ['auth', 'token'],
    intent: `intent of ${overrides.episodeId}`,
    obsCount: 6,
    investigate: 4,
    execute: 2,
    failures: 1,
    hotFiles: [{ path: 'src/auth/refresh.ts', touches: 3 }],
    durationMs: 600_000,
    toolsUsed: ['Read', 'Edit'],
    participants: ['user-1'],
    entities: ['auth'],
    outcome: 'success',
    tags: ['debugging'],
    keyDecisions: [],
    parentEpisodeId: null,
    crossThreadEpisodeIds: [],
    summary: null,
    workUnitRef: null,
    sourceEventIds: [`source-${overrides.episodeId}`],
    ...overrides,
  };
}

export function promptRecord(
  overrides: Partial<PromptSubmitted> & { eventId: string },
): PromptSubmitted {
  return userPrompt({ tenantId: TENANT, projectId: PROJECT, timestamp: T0, ...overrides });
}

let nextOffset = 0;

/** A consumed record as the consumer hands it over. */
export function delivered<E>(
  event: E,
  {
    topic = 'topic',
    key = null,
    partition = 0,
  }: { topic?: string; key?: string | null; partition?: number } = {},
): Delivered<E> {
  nextOffset += 1;
  return { event, topic, partition, offset: String(nextOffset), key, headers: {} };
}

/** A tombstone (a null value) as the consumer hands it over on a route that takes tombstones. */
export function tombstone(
  key: string,
  { topic = 'topic', partition = 0 }: { topic?: string; partition?: number } = {},
): DeliveredTombstone {
  nextOffset += 1;
  return { event: null, topic, partition, offset: String(nextOffset), key, headers: {} };
}
