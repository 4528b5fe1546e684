import {
  MEMORY_TYPES,
  SCHEMA_VERSION,
  type Memory,
  type MemoryType,
  type Typed,
} from '@engram/contracts';
import { memoryIdOf } from '../distillation/memories';
import { idOf } from '../ids/deterministic-id';
import { NO_MEMORY_DETAILS } from '../memory/memory-defaults';
import { redactSecrets } from '../redaction';
import { classifyNote } from '../observation/rules/remember-request.rule';
import { requireScope, type RecallScope } from './recall-scope';
import { InvalidRecallRequestError } from './retrieval-errors';

/**
 * Remember (SPEC §7): an explicit "remember this". Every request is published as a
 * RememberRequested lifecycle event — the agent's note waits in the observer's scratchpad until
 * its work validates. A person teaching Engram directly (a user and no agent) is not a note to
 * validate: it becomes a `user_taught` memory at once, indexed immediately so the next recall
 * finds it. Ids are deterministic: the same request is the same event and the same memory.
 */

export interface RememberInput {
  tenantId: string;
  projectId: string;
  sessionId?: string;
  agentId?: string;
  userId?: string;
  text: string;
  /** A memory type; empty: classified from the text. */
  type?: string;
  relatedFiles?: readonly string[];
}

export interface RememberRequest {
  scope: RecallScope;
  sessionId: string;
  agentId: string;
  userId: string | null;
  text: string;
  memoryType: MemoryType | null;
  relatedFiles: string[];
}

/** A note is a sentence or a paragraph, not a document. */
export const MAX_REMEMBER_CHARS = 4_000;
/** Who taught a user_taught memory when no agent was involved. */
export const USER_TAUGHT_AGENT_ID = 'engram-user';
/** A person said so: confident, and verified by that person. */
export const USER_TAUGHT_CONFIDENCE = 0.95;

const TYPE_SET: ReadonlySet<string> = new Set(MEMORY_TYPES);

export function parseRememberRequest(input: RememberInput): RememberRequest {
  const scope = requireScope(input);
  const text = input.text?.trim() ?? '';
  if (text === '') throw new InvalidRecallRequestError('text', 'is required');
  if (text.length > MAX_REMEMBER_CHARS) {
    throw new InvalidRecallRequestError(
      'text',
      `is ${text.length} characters; at most ${MAX_REMEMBER_CHARS}`,
    );
  }
  // SPEC §11: redacted before anything is stored (the event, the memory, the retrieval store).
  const redacted = redactSecrets(text).text;
  const type = input.type?.trim() ?? '';
  if (type !== '' && !TYPE_SET.has(type)) {
    throw new InvalidRecallRequestError('type', `"${type}" is not a memory type`);
  }
  const agentId = input.agentId?.trim() ?? '';
  const userId = input.userId?.trim() ?? '';
  if (agentId === '' && userId === '') {
    throw new InvalidRecallRequestError('agentId', 'or userId is required (who asks to remember)');
  }
  const relatedFiles = [...(input.relatedFiles ?? [])].map((file) => file.trim());
  if (relatedFiles.some((file) => file === '')) {
    throw new InvalidRecallRequestError('relatedFiles', 'must not contain empty paths');
  }
  return {
    scope,
    // A person teaching outside any session still needs one in the envelope: their own.
    sessionId: input.sessionId?.trim() || personalSessionId(userId || null),
    agentId: agentId || USER_TAUGHT_AGENT_ID,
    userId: userId || null,
    text: redacted,
    memoryType: type === '' ? null : (type as MemoryType),
    relatedFiles,
  };
}

/** The session a request without one is filed under: its person's own (`user:` alone for none). */
export function personalSessionId(userId: string | null): string {
  return `user:${userId ?? ''}`;
}

/** Whether the request named a session of its own (not the personalSessionId fallback). */
export function namesOwnSession(request: RememberRequest): boolean {
  return request.sessionId !== personalSessionId(request.userId);
}

/** Taught by a person (a user and no agent): a memory now, not a note awaiting validation. */
export function isUserTaught(request: RememberRequest): boolean {
  return request.userId !== null && request.agentId === USER_TAUGHT_AGENT_ID;
}

export function rememberRequestedEvent(
  request: RememberRequest,
  now: number,
): Typed<'RememberRequested'> {
  return {
    type: 'RememberRequested',
    eventId: idOf(
      'remember',
      request.scope.tenantId,
      request.scope.projectId,
      request.sessionId,
      request.agentId,
      request.memoryType ?? '',
      request.text,
      ...request.relatedFiles,
    ),
    ...request.scope,
    sessionId: request.sessionId,
    agentId: request.agentId,
    userId: request.userId,
    timestamp: now,
    schemaVersion: SCHEMA_VERSION,
    text: request.text,
    memoryType: request.memoryType,
    relatedFiles: request.relatedFiles,
  };
}

/**
 * The request a RememberRequested event was published for (rememberRequestedEvent's inverse), as
 * a reader of the log sees it: the text stays as published (redacted once, before it was stored),
 * so the note and the memory have the ids the server that answered gave them. Throws
 * InvalidRecallRequestError for an event no Remember could have published.
 */
export function rememberRequestOf(event: Typed<'RememberRequested'>): RememberRequest {
  const scope = requireScope(event);
  const text = event.text.trim();
  if (text === '' || text.length > MAX_REMEMBER_CHARS) {
    throw new InvalidRecallRequestError(
      'text',
      `is ${text.length} characters; 1 to ${MAX_REMEMBER_CHARS}`,
    );
  }
  if (event.sessionId.trim() === '' || event.agentId.trim() === '') {
    throw new InvalidRecallRequestError('sessionId', 'and agentId are required');
  }
  if (event.relatedFiles.some((file) => file.trim() === '')) {
    throw new InvalidRecallRequestError('relatedFiles', 'must not contain empty paths');
  }
  return {
    scope,
    sessionId: event.sessionId,
    agentId: event.agentId,
    userId: event.userId,
    text: event.text,
    memoryType: event.memoryType,
    relatedFiles: [...event.relatedFiles],
  };
}

/** The memory a person taught, with the id any later write of the same content gets. */
export function userTaughtMemory(
  request: RememberRequest,
  event: Typed<'RememberRequested'>,
): Memory {
  const memoryType = request.memoryType ?? classifyNote(request.text);
  const { tenantId, projectId } = request.scope;
  return {
    eventId: idOf('user-taught', event.eventId),
    tenantId,
    projectId,
    sessionId: request.sessionId,
    agentId: request.agentId,
    userId: request.userId,
    timestamp: event.timestamp,
    schemaVersion: SCHEMA_VERSION,
    memoryType,
    content: request.text,
    confidence: USER_TAUGHT_CONFIDENCE,
    tags: [],
    relatedFiles: request.relatedFiles,
    relatedModules: [],
    createdAt: event.timestamp,
    lastAccessedAt: event.timestamp,
    accessCount: 0,
    workUnitRef: null,
    scope: request.relatedFiles.length > 0 ? 'module' : 'global',
    source: 'user_taught',
    episodeId: null,
    commitSha: null,
    provenanceSessionIds: [request.sessionId],
    sourceEventIds: [event.eventId],
    targetNodeId: null,
    relations: [],
    decayHalfLifeDays: null,
    needsReview: false,
    userVerified: true,
    citationText: null,
    staleAt: null,
    embedding: null,
    embeddingModel: null,
    ...NO_MEMORY_DETAILS,
    memoryId: memoryIdOf(tenantId, projectId, memoryType, request.text),
  };
}
