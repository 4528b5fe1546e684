import type { Memory, TaskComplexity, WorkUnitRef } from '@engram/contracts';
import type { MemoryCandidate } from '../candidates';
import type { ObserverSettings } from '../observer-settings';
import type { ProjectObservationStats } from '../project-stats';
import { inferCandidates } from '../rules';
import type { ScratchpadCommit, ScratchpadNote, ScratchpadQaIssue } from '../scratchpad-records';
import type { ObserverSignal } from '../signals';
import { buildMemory, observedMemoryId, type EpisodeRange } from './memory-builder';
import {
  checkNovelty,
  passesFrequency,
  scoreCandidate,
  type CandidateEmbedding,
  type ExistingMemoryVector,
  type ScoreBreakdown,
} from './scoring';
import { synthesiseTexts, type SynthesisOutcome, type Synthesiser } from './synthesiser';
import { renderMemoryTemplate, type MemoryText } from './templates';
import { filterAbandonedApproaches } from './validation-filter';

/**
 * The promotion pipeline of SPEC §5, in three calls so the core never calls a model:
 *   draftCandidates  — validation filter → rules → frequency thresholds → template drafts;
 *   (the caller embeds the drafts' content, if it has an embedder)
 *   rankCandidates   — novelty (cosine < 0.88) → score → cap by task complexity;
 *   promoteRanked    — synthesis (optional LLM, else templates) → Memory records.
 * The cap runs before synthesis (the SPEC lists it after): synthesis changes wording, not rank,
 * so the same memories survive either way and the LLM only writes the ones that are kept.
 */
export interface PromotionInput {
  tenantId: string;
  projectId: string;
  signals: readonly ObserverSignal[];
  notes: readonly ScratchpadNote[];
  qaIssues: readonly ScratchpadQaIssue[];
  commits: readonly ScratchpadCommit[];
  stats: ProjectObservationStats;
  /** false: SessionEnded / expiry without validation. */
  validated: boolean;
  now: number;
  settings: ObserverSettings;
}

export type RejectionStage = 'frequency' | 'novelty' | 'score' | 'cap';

export interface Rejection {
  key: string;
  memoryId: string;
  stage: RejectionStage;
  detail: string;
}

export interface DraftCandidate extends MemoryCandidate {
  memoryId: string;
  draft: MemoryText;
}

export interface RankedCandidate extends DraftCandidate {
  breakdown: ScoreBreakdown;
  embedding?: CandidateEmbedding;
}

export interface RankingOptions {
  /** Draft embeddings by candidate key (missing: nothing to compare, novelty 1). */
  embeddings?: ReadonlyMap<string, CandidateEmbedding>;
  /** Existing memories of the project with their embeddings. */
  existingMemories?: readonly ExistingMemoryVector[];
  complexity: TaskComplexity | null;
  /** Memories already promoted from this scratchpad (incremental passes share one cap). */
  alreadyPromoted: number;
}

export interface PromotionContext {
  workUnitRef: WorkUnitRef | null;
  fallbackSessionId: string;
  episodes?: readonly EpisodeRange[];
  synthesiser?: Synthesiser;
}

export function draftCandidates(input: PromotionInput): {
  drafts: DraftCandidate[];
  rejected: Rejection[];
  discardedSignals: ObserverSignal[];
} {
  const { kept, discarded } = filterAbandonedApproaches(input.signals);
  const candidates = inferCandidates({ ...input, signals: kept });
  const drafts: DraftCandidate[] = [];
  const rejected: Rejection[] = [];
  for (const candidate of candidates) {
    const memoryId = observedMemoryId(input.tenantId, input.projectId, candidate);
    if (!passesFrequency(candidate, input.settings)) {
      const threshold = input.settings.frequencyThresholds[candidate.signalType];
      rejected.push({
        key: candidate.key,
        memoryId,
        stage: 'frequency',
        detail: `${candidate.signalType} count ${candidate.frequency} < ${threshold}`,
      });
      continue;
    }
    drafts.push({ ...candidate, memoryId, draft: renderMemoryTemplate(candidate) });
  }
  return { drafts, rejected, discardedSignals: discarded };
}

/** Tasks of unknown complexity get the standard cap. */
export function promotionCap(
  complexity: TaskComplexity | null,
  settings: ObserverSettings,
): number {
  return settings.promotionCaps[complexity ?? 'standard'];
}

export function rankCandidates(
  drafts: readonly DraftCandidate[],
  options: RankingOptions,
  now: number,
  settings: ObserverSettings,
): { selected: RankedCandidate[]; rejected: Rejection[] } {
  const rejected: Rejection[] = [];
  const passing: RankedCandidate[] = [];
  for (const draft of drafts) {
    const embedding = options.embeddings?.get(draft.key);
    const novelty = checkNovelty(embedding, options.existingMemories ?? [], draft.memoryId);
    const reject = (stage: RejectionStage, detail: string) =>
      rejected.push({ key: draft.key, memoryId: draft.memoryId, stage, detail });
    if (novelty.maxCosine !== null && novelty.maxCosine >= settings.noveltyMaxCosine) {
      reject(
        'novelty',
        `cosine ${novelty.maxCosine.toFixed(3)} to ${novelty.nearestMemoryId} >= ${settings.noveltyMaxCosine}`,
      );
      continue;
    }
    const breakdown = scoreCandidate(draft, novelty, now, settings);
    if (!(breakdown.score > breakdown.threshold)) {
      reject('score', `score ${breakdown.score.toFixed(3)} <= ${breakdown.threshold}`);
      continue;
    }
    passing.push({ ...draft, breakdown, ...(embedding ? { embedding } : {}) });
  }
  passing.sort((a, b) => b.breakdown.score - a.breakdown.score || (a.key < b.key ? -1 : 1));
  const room = Math.max(0, promotionCap(options.complexity, settings) - options.alreadyPromoted);
  for (const dropped of passing.slice(room)) {
    rejected.push({
      key: dropped.key,
      memoryId: dropped.memoryId,
      stage: 'cap',
      detail: `cap ${promotionCap(options.complexity, settings)} for ${options.complexity ?? 'standard'} tasks reached`,
    });
  }
  return { selected: passing.slice(0, room), rejected };
}

export async function promoteRanked(
  selected: readonly RankedCandidate[],
  input: Pick<
    PromotionInput,
    'tenantId' | 'projectId' | 'commits' | 'validated' | 'now' | 'settings'
  >,
  context: PromotionContext,
): Promise<{ memories: Memory[]; synthesis: SynthesisOutcome }> {
  const synthesis = await synthesiseTexts(
    selected.map((c) => ({ key: c.key, memoryType: c.memoryType, facts: c.facts, draft: c.draft })),
    context.synthesiser,
  );
  const buildContext = {
    ...input,
    workUnitRef: context.workUnitRef,
    fallbackSessionId: context.fallbackSessionId,
    episodes: context.episodes ?? [],
  };
  const memories = selected.map((candidate, i) =>
    buildMemory(candidate, synthesis.texts[i], synthesis.writtenBy[i], buildContext),
  );
  return { memories, synthesis };
}

/** All three stages at once, for callers whose draft embeddings are known up front (or none). */
export async function runPromotion(
  input: PromotionInput,
  options: RankingOptions,
  context: PromotionContext,
): Promise<{ memories: Memory[]; rejected: Rejection[]; synthesis: SynthesisOutcome }> {
  const drafted = draftCandidates(input);
  const ranked = rankCandidates(drafted.drafts, options, input.now, input.settings);
  const promoted = await promoteRanked(ranked.selected, input, context);
  return { ...promoted, rejected: [...drafted.rejected, ...ranked.rejected] };
}
