import type { Memory } from '@engram/contracts';
import { idOf } from '../ids/deterministic-id';
import { redactSecrets } from '../redaction';
import { MAX_REMEMBER_CHARS } from './remember';
import { requireScope, type RecallScope } from './recall-scope';
import { InvalidRecallRequestError } from './retrieval-errors';

/**
 * User feedback on a memory (SPEC §6 lifecycle, seed 002's memory card: Confirm, Correct, Flag
 * wrong, Delete). A person's word outranks any inference: confirming or correcting makes the
 * memory user-verified and at least USER_CONFIRMED_CONFIDENCE; "no longer applies" marks it stale
 * (never injected again, penalised in searches); "wrong" halves its confidence and sends it back
 * to review. The result is the memory's next version, written under the same id. Deleting it,
 * or correcting it as a duplicate of another memory, removes it: a tombstone under its id.
 */

export const FEEDBACK_ACTIONS = ['confirm', 'correct', 'flag_wrong', 'delete'] as const;
export type FeedbackAction = (typeof FEEDBACK_ACTIONS)[number];
export const CORRECTION_REASONS = ['inaccurate', 'outdated', 'too_specific', 'duplicate'] as const;
export type CorrectionReason = (typeof CORRECTION_REASONS)[number];

export const USER_CONFIRMED_CONFIDENCE = 0.9;
/** Flagged wrong: halved, so it drops below the injection floor (0.65) from anywhere under 1.3. */
export const FLAGGED_WRONG_FACTOR = 0.5;

export interface FeedbackInput {
  tenantId: string;
  projectId: string;
  memoryId: string;
  action: string;
  reason?: string;
  correctedContent?: string;
  duplicateOfMemoryId?: string;
  userId?: string;
}

export interface FeedbackRequest {
  scope: RecallScope;
  memoryId: string;
  action: FeedbackAction;
  reason: CorrectionReason | null;
  correctedContent: string | null;
  duplicateOfMemoryId: string | null;
  userId: string | null;
}

export function parseFeedback(input: FeedbackInput): FeedbackRequest {
  const scope = requireScope(input);
  const memoryId = input.memoryId?.trim() ?? '';
  if (memoryId === '') throw new InvalidRecallRequestError('memoryId', 'is required');
  const action = oneOf(input.action, FEEDBACK_ACTIONS, 'action');
  if (action === null) throw new InvalidRecallRequestError('action', 'is required');
  const reason = oneOf(input.reason, CORRECTION_REASONS, 'reason');
  if (action === 'correct' && reason === null) {
    throw new InvalidRecallRequestError('reason', 'is required with CORRECT');
  }
  // A correction becomes the memory's content, stored and injected: redacted like any prompt.
  const corrected = input.correctedContent?.trim() || null;
  if (corrected !== null && corrected.length > MAX_REMEMBER_CHARS) {
    // The same bound as Remember: both become a memory's content (issue #19, bounded work).
    throw new InvalidRecallRequestError(
      'correctedContent',
      `is ${corrected.length} characters; at most ${MAX_REMEMBER_CHARS}`,
    );
  }
  const correctedContent = corrected === null ? null : redactSecrets(corrected).text;
  if ((reason === 'inaccurate' || reason === 'too_specific') && correctedContent === null) {
    throw new InvalidRecallRequestError('correctedContent', `is required to correct (${reason})`);
  }
  const duplicateOfMemoryId = input.duplicateOfMemoryId?.trim() || null;
  if (
    reason === 'duplicate' &&
    (duplicateOfMemoryId === null || duplicateOfMemoryId === memoryId)
  ) {
    throw new InvalidRecallRequestError('duplicateOfMemoryId', 'must name another memory');
  }
  return {
    scope,
    memoryId,
    action,
    reason: action === 'correct' ? reason : null,
    correctedContent,
    duplicateOfMemoryId,
    userId: input.userId?.trim() || null,
  };
}

/**
 * Deleting (DELETE, or CORRECT as a duplicate of another memory) removes the memory instead of
 * updating it: a tombstone of its id on memory.memories.v1, not a next version.
 */
export function feedbackDeletes(request: FeedbackRequest): boolean {
  return request.action === 'delete' || request.reason === 'duplicate';
}

/**
 * The memory's next version after the feedback, for the actions that update it (a deletion has
 * no next version: see feedbackDeletes).
 */
export function applyFeedback(memory: Memory, request: FeedbackRequest, now: number): Memory {
  // A new version is a new event (the envelope's eventId is the idempotency key downstream).
  const eventId = idOf('feedback', memory.eventId, request.action, request.reason ?? '', now);
  const next = {
    ...memory,
    eventId,
    timestamp: now,
    ...(request.userId && { userId: request.userId }),
  };
  const verified = {
    userVerified: true,
    needsReview: false,
    confidence: Math.max(memory.confidence, USER_CONFIRMED_CONFIDENCE),
  };
  switch (request.action) {
    case 'confirm':
      return { ...next, ...verified };
    case 'flag_wrong':
      return {
        ...next,
        userVerified: false,
        needsReview: true,
        confidence: memory.confidence * FLAGGED_WRONG_FACTOR,
      };
    case 'correct':
      if (request.reason === 'outdated') {
        return { ...next, staleAt: memory.staleAt ?? now, needsReview: false };
      }
      return { ...next, ...verified, content: request.correctedContent ?? memory.content };
    case 'delete':
      return next;
  }
}

function oneOf<T extends string>(
  value: string | undefined,
  allowed: readonly T[],
  field: string,
): T | null {
  const name = value?.trim().toLowerCase() ?? '';
  if (name === '') return null;
  if (!(allowed as readonly string[]).includes(name)) {
    throw new InvalidRecallRequestError(
      field,
      `must be one of ${allowed.join(', ')}, got ${value}`,
    );
  }
  return name as T;
}
