import type { Memory, WorkUnitRef } from '@engram/contracts';
import { idOf } from '../../ids/deterministic-id';
import type { MemoryCandidate } from '../candidates';
import type { ObserverSettings } from '../observer-settings';
import type { ScratchpadCommit } from '../scratchpad-records';
import { memoryDetails, memoryRelations } from './memory-details';
import type { CandidateEmbedding, ScoreBreakdown } from './scoring';
import type { MemoryText } from './templates';

/** `Memory.schemaVersion` written (contracts' SCHEMA_VERSION; a value import would cycle). */
const MEMORY_SCHEMA_VERSION = 1;
export const OBSERVER_AGENT_ID = 'engram-observer';
const MAX_SOURCE_EVENT_IDS = 100;
const DEAD_END_HALF_LIFE_DAYS = 90;
/**
 * Seed 002 §7: recipes start at 0.7; §8: QA failures at 0.8; §9: E2E observations at 0.75
 * ("needs a second observation to confirm"); explicit notes chosen 0.9.
 */
const FIXED_CONFIDENCE: Partial<Record<string, number>> = {
  workflow_recipe: 0.7,
  qa_auto: 0.8,
  mcp_auto: 0.75,
  agent_explicit: 0.9,
};
/**
 * Seed 002 §15 Q6: an E2E observation seen again in another session is confirmed, 0.9 (within the
 * evidence one promotion reads: a work unit's scratchpad can span sessions).
 */
const E2E_CONFIRMED_CONFIDENCE = 0.9;
/** Sources whose memories are always reviewed (seed 002 §9: automation can misclassify E2E). */
const ALWAYS_REVIEWED = new Set(['observer_inferred', 'mcp_auto']);

/** Where an episode lies in its session, to name the episode of a memory's newest evidence. */
export interface EpisodeRange {
  sessionId: string;
  episodeId: string;
  firstPromptId: number;
  lastPromptId: number;
}

export interface MemoryBuildContext {
  tenantId: string;
  projectId: string;
  now: number;
  /** false: promoted at SessionEnded or expiry without validation (lower confidence, review). */
  validated: boolean;
  workUnitRef: WorkUnitRef | null;
  /** The session a memory is attributed to when its evidence names none. */
  fallbackSessionId: string;
  commits: readonly ScratchpadCommit[];
  episodes: readonly EpisodeRange[];
  settings: ObserverSettings;
}

export interface BuildableCandidate extends MemoryCandidate {
  memoryId: string;
  breakdown: ScoreBreakdown;
  embedding?: CandidateEmbedding;
}

/**
 * The memory id: uuid v5 of tenant, project, type and natural key (SPEC §6), in the same form as
 * the distiller's content ids (`idOf('memory', …)`), so an explicit note whose natural key is its
 * normalised content gets the same id from either path.
 */
export function observedMemoryId(
  tenantId: string,
  projectId: string,
  candidate: Pick<MemoryCandidate, 'memoryType' | 'naturalKey'>,
): string {
  return idOf('memory', tenantId, projectId, candidate.memoryType, candidate.naturalKey);
}

/** A promoted memory (`memory.memories.v1`), with provenance and the overlapping commit. */
export function buildMemory(
  candidate: BuildableCandidate,
  text: MemoryText,
  writtenBy: 'synthesiser' | 'template',
  context: MemoryBuildContext,
): Memory {
  const { evidence } = candidate;
  const sessionId =
    evidence.latest?.sessionId ?? evidence.sessionIds[0] ?? context.fallbackSessionId;
  const confidence = confidenceOf(candidate, context);
  const reuseEmbedding = writtenBy === 'template' && candidate.embedding !== undefined;
  return {
    eventId: idOf('memory-record', candidate.memoryId, text.content, confidence),
    tenantId: context.tenantId,
    projectId: context.projectId,
    sessionId,
    agentId: OBSERVER_AGENT_ID,
    userId: null,
    timestamp: context.now,
    schemaVersion: MEMORY_SCHEMA_VERSION,
    memoryId: candidate.memoryId,
    memoryType: candidate.memoryType,
    content: text.content,
    confidence,
    tags: tagsOf(candidate, context),
    relatedFiles: candidate.relatedFiles,
    relatedModules: candidate.relatedModules,
    createdAt: context.now,
    lastAccessedAt: context.now,
    accessCount: 0,
    workUnitRef: context.workUnitRef,
    scope: candidate.scope,
    source: candidate.source,
    episodeId: episodeOf(evidence.latest, context.episodes),
    commitSha: overlappingCommit(candidate.relatedFiles, context.commits),
    provenanceSessionIds: evidence.sessionIds,
    sourceEventIds: evidence.eventIds.slice(0, MAX_SOURCE_EVENT_IDS),
    targetNodeId: null,
    relations: memoryRelations(candidate),
    decayHalfLifeDays: candidate.memoryType === 'dead_end' ? DEAD_END_HALF_LIFE_DAYS : null,
    needsReview: ALWAYS_REVIEWED.has(candidate.source) || !context.validated,
    userVerified: false,
    citationText: text.citationText,
    staleAt: null,
    embedding: reuseEmbedding ? Array.from(candidate.embedding!.vector) : null,
    embeddingModel: reuseEmbedding ? candidate.embedding!.model : null,
    ...memoryDetails(candidate, context.workUnitRef),
  };
}

/**
 * Inferred memories are as confident as their score (clamped to [0.05, 0.95]: never certain,
 * never worthless); seed-fixed values for recipes, QA failures and explicit notes. Memories of
 * work that never validated keep `unvalidatedConfidenceFactor` of that.
 */
function confidenceOf(candidate: BuildableCandidate, context: MemoryBuildContext): number {
  const confirmedE2e =
    candidate.source === 'mcp_auto' && candidate.evidence.sessionIds.length >= 2
      ? E2E_CONFIRMED_CONFIDENCE
      : undefined;
  const fixed =
    confirmedE2e ?? FIXED_CONFIDENCE[candidate.memoryType] ?? FIXED_CONFIDENCE[candidate.source];
  const base = fixed ?? Math.min(0.95, Math.max(0.05, candidate.breakdown.score));
  const factor = context.validated ? 1 : context.settings.unvalidatedConfidenceFactor;
  return Math.round(base * factor * 1000) / 1000;
}

function tagsOf(candidate: MemoryCandidate, context: MemoryBuildContext): string[] {
  const tags = ['observer', candidate.rule];
  // Seed 002 §9 tags: e2e, the tool, the observation type.
  if (candidate.facts.kind === 'e2e_observation') {
    tags.push('e2e', candidate.facts.mcpTool, candidate.facts.observationType);
  }
  if (!context.validated) tags.push('unvalidated');
  return tags;
}

/** The newest commit (by time, then SHA) that changed one of the memory's files. */
export function overlappingCommit(
  files: readonly string[],
  commits: readonly ScratchpadCommit[],
): string | null {
  const overlapping = commits
    .filter((commit) => commit.files.some((file) => files.includes(file)))
    .sort((a, b) => b.at - a.at || (a.sha < b.sha ? -1 : 1));
  return overlapping[0]?.sha ?? null;
}

function episodeOf(
  latest: MemoryCandidate['evidence']['latest'],
  episodes: readonly EpisodeRange[],
): string | null {
  if (latest === null || latest.promptId === null) return null;
  const { sessionId, promptId } = latest;
  const episode = episodes.find(
    (e) => e.sessionId === sessionId && e.firstPromptId <= promptId && promptId <= e.lastPromptId,
  );
  return episode?.episodeId ?? null;
}
