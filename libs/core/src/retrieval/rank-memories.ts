import type { Memory } from '@engram/contracts';
import { maxAccessCount, scoreSubject } from './hybrid-score';
import { memoryFilterRejection, validateMemoryFilter, type MemoryFilter } from './memory-filter';
import { storedVector, type ModelVector } from './model-vector';
import { memoryProvenance, type Provenance } from './provenance';
import { byScore, rankDocuments } from './rank-documents';
import type { RankingConfig } from './ranking-config';
import type { RankedHit } from './rrf';
import type { ScoreComponents } from './score-components';
import { memorySubject } from './scoring-subjects';
import { presentMemory } from './stale';
import type { UniversalPhase } from './universal-phase';

/** A memory as a recall returns it: display text, effective confidence, score, provenance. */
export interface RankedMemory {
  memory: Memory;
  /** Prefixed `[STALE — file no longer exists]` when stale. */
  content: string;
  /** Penalised when stale. */
  confidence: number;
  stale: boolean;
  score: ScoreComponents;
  provenance: Provenance;
}

export interface RankMemoriesInput {
  filter: MemoryFilter;
  phase: UniversalPhase;
  now: number;
  bm25: readonly RankedHit[];
  /** null when the kNN search did not run. */
  knn: readonly RankedHit[] | null;
  query: ModelVector | null;
  /** The documents of the candidates (others in the lists are treated as deleted). */
  memories: readonly Memory[];
  hydeIds?: ReadonlySet<string>;
  limit?: number;
}

/**
 * Explicit memory search (Recall on the memories tier): validate the scope, keep the candidates
 * that pass the filter, rank them (rankDocuments) and present them (stale penalty and prefix).
 */
export function rankMemories(input: RankMemoriesInput, config: RankingConfig): RankedMemory[] {
  const filter = validateMemoryFilter(input.filter);
  const byId = new Map(input.memories.map((memory) => [memory.memoryId, memory]));
  const eligible = (id: string): Memory | undefined => {
    const memory = byId.get(id);
    return memory && memoryFilterRejection(memory, filter, config.stale) === null
      ? memory
      : undefined;
  };
  const scored = rankDocuments(
    {
      bm25: input.bm25,
      knn: input.knn,
      query: input.query,
      vectorOf: (id) => {
        const memory = byId.get(id);
        return memory ? storedVector(memory.embedding, memory.embeddingModel) : null;
      },
      subjectOf: (id) => {
        const memory = eligible(id);
        return memory ? memorySubject(memory) : undefined;
      },
      phase: input.phase,
      now: input.now,
      hydeIds: input.hydeIds,
    },
    config,
  );
  const limited = input.limit === undefined ? scored : scored.slice(0, Math.max(0, input.limit));
  return limited.map(({ id, score }) => toRankedMemory(byId.get(id) as Memory, score, config));
}

export interface RankByPriorsInput {
  memories: readonly Memory[];
  phase: UniversalPhase;
  now: number;
  causalExpansion?: boolean;
}

/**
 * Ranking without a query (proactive injection, causal expansion): nothing says how well a memory
 * matches, so its own confidence stands in for relevance; recency, frequency, phase and stale
 * weighting are as in a search. Callers filter first.
 */
export function rankByPriors(input: RankByPriorsInput, config: RankingConfig): RankedMemory[] {
  const subjects = input.memories.map(memorySubject);
  const max = maxAccessCount(subjects);
  const context = {
    phase: input.phase,
    now: input.now,
    maxAccessCount: max,
    causalExpansion: input.causalExpansion,
  };
  return input.memories
    .map((memory, index) => ({
      id: memory.memoryId,
      memory,
      score: scoreSubject(
        subjects[index],
        { basis: 'confidence', confidence: memory.confidence },
        context,
        config,
      ),
    }))
    .sort(byScore)
    .map(({ memory, score }) => toRankedMemory(memory, score, config));
}

function toRankedMemory(
  memory: Memory,
  score: ScoreComponents,
  config: RankingConfig,
): RankedMemory {
  const presented = presentMemory(memory, config.stale);
  return {
    memory,
    content: presented.content,
    confidence: presented.confidence,
    stale: presented.stale,
    score,
    provenance: memoryProvenance(memory),
  };
}
