import type { Memory } from '@engram/contracts';
import { idOf } from '../ids/deterministic-id';
import { NO_MEMORY_DETAILS } from '../memory';
import { observedMemoryId, OBSERVER_AGENT_ID } from './promotion/memory-builder';
import { moduleOf } from './project-paths';
import { workUnitKeyOf, type WorkUnitOutcomeFacts } from './work-unit-outcome';

/** `Memory.schemaVersion` written (contracts' SCHEMA_VERSION; a value import would cycle). */
const MEMORY_SCHEMA_VERSION = 1;
/**
 * A verdict is observed, not inferred from a pattern: high confidence, and no review asked for
 * (a review queue of every validation would bury the inferences that need one).
 */
const OUTCOME_CONFIDENCE = 0.9;
/** Files named in the content; the rest are in `relatedFiles` and the details. */
const FILES_IN_CONTENT = 5;
const CITATION_CHARS = 80;

/** The id of a work unit's outcome memory: one per work unit, a later verdict replaces it. */
export function workUnitOutcomeMemoryId(
  tenantId: string,
  projectId: string,
  facts: Pick<WorkUnitOutcomeFacts, 'workUnitRef'>,
): string {
  return observedMemoryId(tenantId, projectId, {
    memoryType: 'work_unit_outcome',
    naturalKey: workUnitKeyOf(facts.workUnitRef),
  });
}

/**
 * The `work_unit_outcome` memory of a verdict (seed 002 §4, "Work Unit Outcome Recording"):
 * source observer_inferred, scope work_unit, timed by the verdict — the same facts always give
 * the same record, so a replayed verdict rewrites the same memory.
 */
export function workUnitOutcomeMemory(facts: WorkUnitOutcomeFacts, moduleDepth: number): Memory {
  const { verdict, tenantId, projectId } = facts;
  const memoryId = workUnitOutcomeMemoryId(tenantId, projectId, facts);
  const content = outcomeContent(facts);
  return {
    eventId: idOf('memory-record', memoryId, verdict.eventId),
    tenantId,
    projectId,
    sessionId: verdict.sessionId,
    agentId: OBSERVER_AGENT_ID,
    userId: null,
    timestamp: verdict.timestamp,
    schemaVersion: MEMORY_SCHEMA_VERSION,
    memoryId,
    memoryType: 'work_unit_outcome',
    content,
    confidence: OUTCOME_CONFIDENCE,
    tags: ['work_unit_outcome', facts.succeeded ? 'succeeded' : 'failed'],
    relatedFiles: facts.filesModified,
    relatedModules: [...new Set(facts.filesModified.map((f) => moduleOf(f, moduleDepth)))].sort(),
    createdAt: verdict.timestamp,
    lastAccessedAt: verdict.timestamp,
    accessCount: 0,
    workUnitRef: facts.workUnitRef,
    scope: 'work_unit',
    source: 'observer_inferred',
    episodeId: null,
    commitSha: null,
    provenanceSessionIds: facts.sessionIds,
    sourceEventIds: [verdict.eventId],
    targetNodeId: null,
    relations: [],
    // Seed 002 §13: no half-life; archived with the work unit at merge, pruned 90 days later.
    decayHalfLifeDays: null,
    needsReview: false,
    userVerified: false,
    citationText: content.slice(0, CITATION_CHARS),
    staleAt: null,
    embedding: null,
    embeddingModel: null,
    ...NO_MEMORY_DETAILS,
    workUnitOutcome: {
      succeeded: facts.succeeded,
      filesModified: facts.filesModified,
      keyDecisions: facts.keyDecisions,
      stepsTaken: facts.stepsTaken,
      contextTokensUsed: null,
      retryCount: facts.retryCount,
      failureReason: facts.failureReason,
    },
  };
}

/** "<work unit>: succeeded after N steps, edited a.ts, b.ts; 2 retries" / "…: failed …: <why>". */
export function outcomeContent(facts: WorkUnitOutcomeFacts): string {
  const { workUnitRef: ref } = facts;
  const path = ref.hierarchy.join('/');
  const name =
    ref.label.trim() && ref.label.trim() !== path ? `${ref.label.trim()} (${path})` : path;
  const parts = [
    `${facts.succeeded ? 'succeeded' : 'failed'} after ${plural(facts.stepsTaken, 'step')}`,
  ];
  if (facts.filesModified.length > 0) parts.push(`edited ${filesList(facts.filesModified)}`);
  let content = `${name}: ${parts.join(', ')}`;
  if (facts.retryCount > 0) content += `; ${plural(facts.retryCount, 'retry', 'retries')}`;
  if (facts.failureReason !== null) content += `: ${facts.failureReason}`;
  return content;
}

function filesList(files: readonly string[]): string {
  const named = files.slice(0, FILES_IN_CONTENT).join(', ');
  const more = files.length - FILES_IN_CONTENT;
  return more > 0 ? `${named} and ${more} more` : named;
}

function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}
