import { PROTO_LOADER_OPTIONS, type Episode, type PromptSubmitted } from '@engram/contracts';
import type {
  Provenance,
  RankedMemory,
  RecallRequestInput,
  RecallTier,
  ScoreComponents,
  TemporalMode,
} from '@engram/core';
import type { recallv1 } from '@engram/grpc';
import type { RecallAnswer, RecallHit } from './recall.service';

// recall.proto (engram.recall.v1) ⇄ the core's types. Messages are what @grpc/proto-loader gives
// and takes with RECALL_PROTO_LOADER_OPTIONS: camelCase fields, enums as names, int64 as numbers
// (epoch millis fit a double exactly), defaults filled in, oneofs named by a virtual field.
// Their types are generated from the proto (`recallv1`, npm run proto:types): a request is the
// `__Output` a handler is given; an answer is built complete, in the same `__Output` shape (every
// field set, enums by name), so a field the proto adds or renames is a type error here until it
// is mapped.

export const RECALL_PROTO_PACKAGE = 'engram.recall.v1';

export const RECALL_PROTO_LOADER_OPTIONS = PROTO_LOADER_OPTIONS;

const PHASE_PREFIX = 'UNIVERSAL_PHASE_';
const TIER_PREFIX = 'TIER_';

/** `UNIVERSAL_PHASE_IMPLEMENT` → `implement`; unspecified → absent (the core's default). */
export function phaseFromEnum(value: string | number | undefined): string | undefined {
  const name = String(value ?? '');
  if (!name.startsWith(PHASE_PREFIX) || name === `${PHASE_PREFIX}UNSPECIFIED`) return undefined;
  return name.slice(PHASE_PREFIX.length).toLowerCase();
}

/** `TIER_MEMORIES` → `memories`; unspecified → `all` (proto: TIER_UNSPECIFIED = TIER_ALL). */
export function tierFromEnum(value: string | number | undefined): string {
  const name = String(value ?? '');
  if (name === '' || name === `${TIER_PREFIX}UNSPECIFIED`) return 'all';
  // An unknown number stays as it is, so the core names the field `tier` in its refusal.
  return name.startsWith(TIER_PREFIX) ? name.slice(TIER_PREFIX.length).toLowerCase() : name;
}

export function tierToEnum(tier: RecallTier): recallv1.Tier__Output {
  // Every tier of the core must name a value of the proto's enum.
  return `${TIER_PREFIX}${tier.toUpperCase()}` as `TIER_${Uppercase<RecallTier>}`;
}

function temporalFromMessage(message: recallv1.RecallRequest__Output): TemporalMode | null {
  switch (message.temporal) {
    case 'recentSessions':
      return { mode: 'recent_sessions', n: message.recentSessions?.n ?? 0 };
    case 'timeWindow':
      return {
        mode: 'time_window',
        fromMs: message.timeWindow?.fromMs ?? 0,
        toMs: message.timeWindow?.toMs ?? 0,
      };
    case 'aroundEvent':
      return {
        mode: 'around_event',
        timeMs: message.aroundEvent?.timeMs ?? 0,
        windowMs: message.aroundEvent?.windowMs ?? 0,
      };
    case undefined:
      return null;
  }
}

/** The request in the core's terms; `tenantId` is the one the caller's token resolved to. */
export function recallInputFromMessage(
  message: recallv1.RecallRequest__Output,
  tenantId: string,
): RecallRequestInput {
  return {
    tenantId,
    projectId: message.scope?.projectId ?? '',
    query: message.query ?? '',
    phase: phaseFromEnum(message.phase),
    k: message.k ?? 0,
    tier: tierFromEnum(message.tier),
    memoryTypes: message.memoryTypes ?? [],
    relatedFiles: message.relatedFiles ?? [],
    temporal: temporalFromMessage(message),
    excludeStale: message.excludeStale ?? false,
    sessionId: message.sessionId ?? '',
    track: !(message.noTrack ?? false),
  };
}

const GRPC_FIELD_NAMES: Readonly<Record<string, string>> = {
  tenantId: 'scope.tenant_id',
  projectId: 'scope.project_id',
};

/**
 * A field as the core names it (`projectId`, `memoryTypes[1]`, `timeWindow.fromMs`) as a client
 * of recall.proto sees it (`scope.project_id`, `memory_types[1]`, `time_window.from_ms`).
 */
export function grpcFieldName(field: string): string {
  return GRPC_FIELD_NAMES[field] ?? field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

export function scoreMessage(score: ScoreComponents): recallv1.ScoreComponents__Output {
  return {
    bm25: score.bm25,
    bm25Rank: score.bm25Rank,
    knn: score.knn,
    knnRank: score.knnRank,
    fused: score.fused,
    relevance: score.relevance,
    recency: score.recency,
    frequency: score.frequency,
    base: score.base,
    phaseWeight: score.phaseWeight,
    stalePenalty: score.stalePenalty,
    finalScore: score.finalScore,
    hyde: score.hyde,
    causalExpansion: score.causalExpansion,
  };
}

export function provenanceMessage(provenance: Provenance): recallv1.Provenance__Output {
  return {
    ...provenance,
    memoryId: provenance.memoryId ?? '',
    commitSha: provenance.commitSha ?? '',
  };
}

export function memoryItem(ranked: RankedMemory): recallv1.MemoryItem__Output {
  const { memory } = ranked;
  return {
    memoryId: memory.memoryId,
    type: memory.memoryType,
    content: ranked.content,
    confidence: ranked.confidence,
    tags: memory.tags,
    relatedFiles: memory.relatedFiles,
    relatedModules: memory.relatedModules,
    scope: memory.scope,
    source: memory.source,
    needsReview: memory.needsReview,
    userVerified: memory.userVerified,
    citationText: memory.citationText ?? '',
    createdAtMs: memory.createdAt,
    lastAccessedAtMs: memory.lastAccessedAt,
    accessCount: memory.accessCount,
    staleAtMs: memory.staleAt ?? 0,
    stale: ranked.stale,
    workUnitRef: memory.workUnitRef,
  };
}

export function episodeItem(episode: Episode): recallv1.EpisodeItem__Output {
  return {
    episodeId: episode.episodeId,
    sessionId: episode.sessionId,
    threadId: episode.threadId,
    firstPromptId: episode.firstPromptId,
    lastPromptId: episode.lastPromptId,
    startedAtMs: episode.startedAt,
    endedAtMs: episode.endedAt ?? 0,
    intentKeywords: episode.intentKeywords,
    intent: episode.intent ?? '',
    summary: episode.summary ?? '',
    outcome: episode.outcome,
    hotFiles: episode.hotFiles,
    tags: episode.tags,
    toolsUsed: episode.toolsUsed,
    keyDecisions: episode.keyDecisions,
    parentEpisodeId: episode.parentEpisodeId ?? '',
    crossThreadEpisodeIds: episode.crossThreadEpisodeIds,
    failures: episode.failures,
  };
}

export function turnItem(turn: PromptSubmitted, provenance: Provenance): recallv1.TurnItem__Output {
  return {
    eventId: turn.eventId,
    sessionId: turn.sessionId,
    promptId: turn.promptId,
    text: turn.text,
    timestampMs: turn.timestamp,
    threadId: turn.explicitThreadId ?? '',
    episodeId: provenance.episodeIds[0] ?? '',
  };
}

function itemOf(
  hit: RecallHit,
): Pick<recallv1.RecallResult__Output, 'memory' | 'episode' | 'turn'> {
  switch (hit.tier) {
    case 'memories':
      return { memory: memoryItem(hit.memory) };
    case 'episodes':
      return { episode: episodeItem(hit.episode) };
    case 'turns':
      return { turn: turnItem(hit.turn, hit.provenance) };
  }
}

/** The outdated memories folded under a memory result (none for the other tiers). */
export function replacedMessages(hit: RecallHit): recallv1.ReplacedMemory__Output[] {
  return hit.tier === 'memories' ? (hit.replaces ?? []).map((replaced) => ({ ...replaced })) : [];
}

export function recallResponseMessage(answer: RecallAnswer): recallv1.RecallResponse__Output {
  return {
    results: answer.results.map((hit) => ({
      tier: tierToEnum(hit.tier),
      ...itemOf(hit),
      text: hit.text,
      scores: scoreMessage(hit.score),
      provenance: provenanceMessage(hit.provenance),
      replaces: replacedMessages(hit),
    })),
    hydeUsed: false,
    embeddingModel: answer.embeddingModel,
  };
}
