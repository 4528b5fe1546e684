import type { Memory, TaskComplexity, WorkUnitRef } from '@engram/contracts';
import type { ObserverSettings } from '../observer-settings';
import type { ProjectObservationStats } from '../project-stats';
import type { PromotionTrigger } from '../scratchpad-lifecycle';
import type { ScratchpadCommit, ScratchpadNote, ScratchpadQaIssue } from '../scratchpad-records';
import type { ObserverSignal } from '../signals';
import type { EpisodeRange } from './memory-builder';
import { statsTimeline, type RecentEvidence } from './recent-evidence';
import {
  draftCandidates,
  promoteRanked,
  rankCandidates,
  type DraftCandidate,
  type PromotionInput,
  type RankedCandidate,
  type Rejection,
} from './promotion-pipeline';
import type { CandidateEmbedding, ExistingMemoryVector } from './scoring';
import type { Synthesiser } from './synthesiser';

/**
 * Why promotions are re-evaluated (issue #19). A promotion's rules read the project's statistics
 * (other sessions' co-accesses, errors, summaries) and its novelty check reads the memories
 * promoted before it. Evaluated once, when its request reached the project stage, a promotion saw
 * whatever other sessions' signals had arrived by then — which depends on how the input topics'
 * partitions were interleaved and batched, not on the events: two clean runs of one input gave
 * different memories. Here a project's recent promotions are a function of the set of requests
 * and of the statistics as of each request's time (a commutative fold, recent-evidence.ts): they
 * are evaluated again, all of them, in a canonical order (event time, then ids, never arrival),
 * whenever either changes; a memory's version is the one its canonically-latest request gives.
 * Once every event is in, the memories are the same whatever the order they came in — frozen
 * requests included, since what they read stopped changing at their time.
 */
export interface PromotionRequestLike {
  scratchpadId: string;
  /** The session a memory is attributed to when its evidence names none. */
  sessionId: string;
  trigger: PromotionTrigger;
  /** The triggering event's time: memories are stamped with it, so a replay agrees. */
  at: number;
  complexity: TaskComplexity | null;
  workUnitRef: WorkUnitRef | null;
  signals: ObserverSignal[];
  notes: ScratchpadNote[];
  qaIssues: ScratchpadQaIssue[];
  commits: ScratchpadCommit[];
  /**
   * The consolidation pass's insights (spec of ≥ 10 subtasks, seed 002 §8): already ranked, and
   * promoted beside the cap (absent in records written before it existed).
   */
  consolidation?: RankedCandidate[];
}

/** A request's place in the canonical order: event time, then scratchpad, session, trigger. */
export function promotionOrderKey(request: PromotionRequestLike): string {
  const { trigger } = request;
  return [
    String(request.at).padStart(16, '0'),
    request.scratchpadId,
    request.sessionId,
    trigger.reason,
    trigger.validated ? '1' : '0',
    trigger.segmentIds.join(','),
  ].join('\u0000');
}

export function comparePromotionRequests(a: PromotionRequestLike, b: PromotionRequestLike): number {
  const x = promotionOrderKey(a);
  const y = promotionOrderKey(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Adds a request to the retained ones, once (a redelivered request is the same key), in order. */
export function retainRequest<R extends PromotionRequestLike>(retained: R[], request: R): void {
  const key = promotionOrderKey(request);
  if (retained.some((r) => promotionOrderKey(r) === key)) return;
  retained.push(request);
  retained.sort(comparePromotionRequests);
}

export interface ConvergedPromotionContext {
  tenantId: string;
  projectId: string;
  /** The base statistics: every signal up to the horizon (see recent-evidence.ts). */
  stats: ProjectObservationStats;
  /** Evidence newer than the horizon: a request reads it up to its own time. */
  recent?: RecentEvidence;
  episodes: readonly EpisodeRange[];
  settings: ObserverSettings;
  /** Memories promoted per scratchpad by requests no longer retained (their share of the cap). */
  frozenPromoted: Readonly<Record<string, number>>;
  /** Vectors of memories promoted by requests no longer retained. */
  frozenVectors: readonly ExistingMemoryVector[];
  /** Embeds drafts (the caller's model); absent: nothing is compared, every draft is novel. */
  embed?: (drafts: DraftCandidate[]) => Promise<Map<string, CandidateEmbedding>>;
  synthesiser?: Synthesiser;
}

export interface RequestOutcome {
  orderKey: string;
  scratchpadId: string;
  memories: Memory[];
  /** The selected candidates' vectors (for the novelty of later requests). */
  vectors: ExistingMemoryVector[];
}

export interface ConvergedPromotion {
  /** Per request, in canonical order. */
  outcomes: RequestOutcome[];
  /** Each memory's version from its canonically-latest request. */
  memories: Map<string, Memory>;
  rejected: Rejection[];
}

/**
 * Evaluates every request in canonical order, each against the statistics as of its own time
 * (the base plus the recent evidence up to its `at`): the novelty check of a request sees the
 * memories of the requests before it (and the frozen ones, one vector per memory), each
 * scratchpad's cap is shared by its requests in that order. A pure function of its arguments (given a
 * deterministic embedder and synthesiser).
 */
export async function promoteConverged(
  requests: readonly PromotionRequestLike[],
  context: ConvergedPromotionContext,
): Promise<ConvergedPromotion> {
  const ordered = [...requests].sort(comparePromotionRequests);
  const promoted = new Map(Object.entries(context.frozenPromoted));
  // One vector per memory, its latest version's: what the frozen vectors keep too, so a request
  // sees the same novelty pool whether the requests before it are frozen yet or not.
  const vectors = new Map<string, ExistingMemoryVector>();
  const noteVector = (vector: ExistingMemoryVector) => {
    vectors.delete(vector.memoryId);
    vectors.set(vector.memoryId, vector);
  };
  context.frozenVectors.forEach(noteVector);
  const outcomes: RequestOutcome[] = [];
  const memories = new Map<string, Memory>();
  const rejected: Rejection[] = [];
  const timeline = statsTimeline(
    context.stats,
    context.recent,
    context.settings.maxSessionSummaries,
  );
  for (const request of ordered) {
    const input: PromotionInput = {
      tenantId: context.tenantId,
      projectId: context.projectId,
      signals: request.signals,
      notes: request.notes,
      qaIssues: request.qaIssues,
      commits: request.commits,
      stats: timeline.at(request.at),
      validated: request.trigger.validated,
      now: request.at,
      settings: context.settings,
    };
    const drafted = draftCandidates(input);
    const embeddings =
      context.embed && drafted.drafts.length > 0 ? await context.embed(drafted.drafts) : new Map();
    const ranked = rankCandidates(
      drafted.drafts,
      {
        embeddings,
        existingMemories: [...vectors.values()],
        complexity: request.complexity,
        alreadyPromoted: promoted.get(request.scratchpadId) ?? 0,
      },
      request.at,
      context.settings,
    );
    const result = await promoteRanked(
      [...ranked.selected, ...(request.consolidation ?? [])],
      input,
      {
        workUnitRef: request.workUnitRef,
        fallbackSessionId: request.sessionId,
        episodes: context.episodes,
        ...(context.synthesiser && { synthesiser: context.synthesiser }),
      },
    );
    promoted.set(
      request.scratchpadId,
      (promoted.get(request.scratchpadId) ?? 0) + result.memories.length,
    );
    const selectedVectors: ExistingMemoryVector[] = [];
    for (const { memoryId, embedding } of ranked.selected) {
      if (!embedding || embedding.model === null) continue;
      selectedVectors.push({
        memoryId,
        embeddingModel: embedding.model,
        embedding: embedding.vector,
      });
    }
    selectedVectors.forEach(noteVector);
    for (const memory of result.memories) {
      memories.delete(memory.memoryId);
      memories.set(memory.memoryId, memory);
    }
    rejected.push(...drafted.rejected, ...ranked.rejected);
    outcomes.push({
      orderKey: promotionOrderKey(request),
      scratchpadId: request.scratchpadId,
      memories: result.memories,
      vectors: selectedVectors,
    });
  }
  return { outcomes, memories, rejected };
}
