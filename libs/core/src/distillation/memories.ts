import type { EpochMillis, Memory, MemoryScope, MemoryType, WorkUnitRef } from '@engram/contracts';
import { idOf } from '../ids/deterministic-id';
import { NO_MEMORY_DETAILS } from '../memory';
import {
  DISTILLED_HALF_LIFE_DAYS,
  halfLifeDaysOf,
  memoryTypeOf,
  PRIORITY_CONFIDENCE,
  type DistilledMemoryType,
} from './memory-types';
import { truncateChars } from './tokens';
import {
  PRIORITY_NAMES,
  priorityRank,
  type Distillation,
  type DistilledFact,
  type DistilledSegment,
  type Priority,
} from './types';

/** Content as compared for ids: lower-case, single spaces, no priority marker or clock time. */
export function normaliseContent(content: string): string {
  return content
    .toLowerCase()
    .replace(/[🔴🟡🟢]\uFE0F?/gu, '')
    .replace(/^\s*\(\d{1,2}:\d{2}\)\s*/, '')
    .replace(/\s+/g, ' ')
    .trim();
}

/** SPEC §6: uuid v5 of tenant, project, type and normalised content. */
export function memoryIdOf(
  tenantId: string,
  projectId: string,
  type: MemoryType,
  content: string,
): string {
  return idOf('memory', tenantId, projectId, type, normaliseContent(content));
}

/** work_state has a natural key instead: one per session, each distillation replaces it. */
export function workStateMemoryId(tenantId: string, projectId: string, sessionId: string): string {
  return idOf('memory', tenantId, projectId, 'work_state', `session:${sessionId}`);
}

/** The id of the memory a fact of a distillation becomes (the reflector's evidence). */
export function factMemoryId(
  distillation: Pick<Distillation, 'tenantId' | 'projectId'>,
  fact: DistilledFact,
): string {
  return memoryIdOf(distillation.tenantId, distillation.projectId, memoryTypeOf(fact), fact.text);
}

export interface MemoryOptions {
  /** Facts below this priority make no memory (default 🟡: ephemeral 🟢 facts are not kept). */
  minPriority: Priority;
  /** agentId of the records (default `engram-distiller`). */
  agentId: string;
  userId: string | null;
  workUnitRef: WorkUnitRef | null;
}

export const DEFAULT_MEMORY_OPTIONS: Readonly<MemoryOptions> = Object.freeze({
  minPriority: '🟡',
  agentId: 'engram-distiller',
  userId: null,
  workUnitRef: null,
});

/**
 * The memories of a distillation: one per fact at or above `minPriority` (type by content,
 * confidence by priority, half-life by type capped by priority, provenance to the source events,
 * source `distilled`), plus a work_state for `<current-task>`. Deterministic: ids from natural
 * keys, times from the events (a fact's own event, else the window's last entry), never from a
 * clock; the same fact twice is one memory with both provenances.
 */
export function distillationToMemories(
  distillation: Distillation,
  options: Partial<MemoryOptions> = {},
): Memory[] {
  const settings = { ...DEFAULT_MEMORY_OPTIONS, ...options };
  const byId = new Map<string, Memory>();
  for (const segment of distillation.segments) {
    for (const fact of segment.facts) {
      if (priorityRank(fact.priority) > priorityRank(settings.minPriority)) continue;
      const memory = factMemory(distillation, segment, fact, settings);
      const existing = byId.get(memory.memoryId);
      byId.set(memory.memoryId, existing === undefined ? memory : mergeMemories(existing, memory));
    }
  }
  const workState = workStateMemory(distillation, settings);
  if (workState !== null) byId.set(workState.memoryId, workState);
  return [...byId.values()];
}

function factMemory(
  distillation: Distillation,
  segment: DistilledSegment,
  fact: DistilledFact,
  settings: MemoryOptions,
): Memory {
  const type = memoryTypeOf(fact);
  const at = fact.at ?? distillation.lastEntryAt ?? distillation.triggerAt;
  const tags = [
    'distilled',
    `priority:${PRIORITY_NAMES[fact.priority]}`,
    `trigger:${distillation.trigger}`,
  ];
  if (fact.kind !== null) tags.push(`kind:${fact.kind}`);
  return baseMemory(distillation, settings, {
    memoryId: memoryIdOf(distillation.tenantId, distillation.projectId, type, fact.text),
    memoryType: type,
    content: fact.text,
    confidence: PRIORITY_CONFIDENCE[fact.priority],
    tags,
    relatedFiles: fact.relatedFiles,
    scope: scopeOf(type, fact.relatedFiles, settings.workUnitRef),
    episodeId: segment.episodeId ?? distillation.episodeId,
    sourceEventIds: fact.sourceEventIds,
    at,
    halfLifeDays: halfLifeDaysOf(type, fact.priority),
    // An LLM's facts, and facts that are not durable, wait for a person's eye.
    needsReview: distillation.method === 'llm' || fact.priority !== '🔴',
  });
}

function workStateMemory(distillation: Distillation, settings: MemoryOptions): Memory | null {
  if (distillation.currentTask === null) return null;
  const content =
    distillation.suggestedResponse === null
      ? distillation.currentTask
      : `${distillation.currentTask}\nNext: ${distillation.suggestedResponse}`;
  const memory = baseMemory(distillation, settings, {
    memoryId: workStateMemoryId(
      distillation.tenantId,
      distillation.projectId,
      distillation.sessionId,
    ),
    memoryType: 'work_state',
    content,
    confidence: PRIORITY_CONFIDENCE['🟡'],
    tags: ['distilled', 'current-task', `trigger:${distillation.trigger}`],
    relatedFiles: [],
    scope: settings.workUnitRef === null ? 'session' : 'work_unit',
    episodeId: distillation.episodeId,
    sourceEventIds: distillation.sourceEventIds,
    at: distillation.lastEntryAt ?? distillation.triggerAt,
    halfLifeDays: DISTILLED_HALF_LIFE_DAYS.work_state,
    needsReview: false,
  });
  const state = {
    currentTask: distillation.currentTask,
    suggestedResponse: distillation.suggestedResponse,
    trigger: distillation.trigger,
    dedupeKey: distillation.dedupeKey,
  };
  return { ...memory, workState: { methodologyStateJson: JSON.stringify(state) } };
}

interface MemoryCore {
  memoryId: string;
  memoryType: DistilledMemoryType;
  content: string;
  confidence: number;
  tags: string[];
  relatedFiles: string[];
  scope: MemoryScope;
  episodeId: string | null;
  sourceEventIds: string[];
  at: EpochMillis;
  halfLifeDays: number | null;
  needsReview: boolean;
}

function baseMemory(distillation: Distillation, settings: MemoryOptions, core: MemoryCore): Memory {
  return {
    // One record per memory and distillation: a redelivered trigger rewrites the same record.
    eventId: idOf('memory-record', core.memoryId, distillation.dedupeKey),
    tenantId: distillation.tenantId,
    projectId: distillation.projectId,
    sessionId: distillation.sessionId,
    agentId: settings.agentId,
    userId: settings.userId,
    timestamp: core.at,
    schemaVersion: 1,
    memoryId: core.memoryId,
    memoryType: core.memoryType,
    content: core.content,
    confidence: core.confidence,
    tags: core.tags,
    relatedFiles: core.relatedFiles,
    relatedModules: modulesOf(core.relatedFiles),
    createdAt: core.at,
    lastAccessedAt: core.at,
    accessCount: 0,
    workUnitRef: settings.workUnitRef,
    scope: core.scope,
    source: 'distilled',
    episodeId: core.episodeId,
    commitSha: null,
    provenanceSessionIds: [distillation.sessionId],
    sourceEventIds: [...new Set(core.sourceEventIds)],
    targetNodeId: null,
    relations: [],
    decayHalfLifeDays: core.halfLifeDays,
    needsReview: core.needsReview,
    userVerified: false,
    citationText: truncateChars(core.content.split('\n')[0], 80),
    staleAt: null,
    embedding: null,
    embeddingModel: null,
    ...NO_MEMORY_DETAILS,
  };
}

function scopeOf(
  type: DistilledMemoryType,
  files: readonly string[],
  workUnitRef: WorkUnitRef | null,
): MemoryScope {
  if (type === 'preference' || type === 'decision') return 'global';
  if (type === 'work_state') return workUnitRef === null ? 'session' : 'work_unit';
  return files.length > 0 ? 'module' : 'global';
}

/** The directories of the files (`src/auth/refresh.ts` → `src/auth`), distinct. */
function modulesOf(files: readonly string[]): string[] {
  return [
    ...new Set(files.filter((f) => f.includes('/')).map((f) => f.slice(0, f.lastIndexOf('/')))),
  ];
}

function mergeMemories(a: Memory, b: Memory): Memory {
  return {
    ...a,
    confidence: Math.max(a.confidence, b.confidence),
    // The more durable fact decides how long the memory lasts.
    decayHalfLifeDays: b.confidence > a.confidence ? b.decayHalfLifeDays : a.decayHalfLifeDays,
    tags: [...new Set([...a.tags, ...b.tags])],
    relatedFiles: [...new Set([...a.relatedFiles, ...b.relatedFiles])],
    relatedModules: [...new Set([...a.relatedModules, ...b.relatedModules])],
    sourceEventIds: [...new Set([...a.sourceEventIds, ...b.sourceEventIds])],
    needsReview: a.needsReview && b.needsReview,
  };
}
