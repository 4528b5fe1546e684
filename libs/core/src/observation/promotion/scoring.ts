import { cosine, type Vector } from '../../math/vectors';
import type { MemoryCandidate } from '../candidates';
import type { ObserverSettings, ThresholdSignal } from '../observer-settings';

const DAY_MS = 24 * 60 * 60 * 1000;

/** A memory already stored for the project, as the novelty check needs it. */
export interface ExistingMemoryVector {
  memoryId: string;
  embedding: Vector;
  /** Vectors of different models are never compared. */
  embeddingModel: string | null;
}

/** A candidate's draft embedding, computed by the caller (the core never calls a model). */
export interface CandidateEmbedding {
  vector: Vector;
  model: string | null;
}

export interface NoveltyCheck {
  /** Highest cosine to a comparable existing memory; null when there was none to compare. */
  maxCosine: number | null;
  nearestMemoryId: string | null;
  /** 1 − max(0, maxCosine); 1 when nothing was comparable. */
  novelty: number;
}

export interface ScoreBreakdown extends NoveltyCheck {
  frequency: number;
  recency: number;
  score: number;
  threshold: number;
}

/**
 * Confirmed sources: a QA report and the agent's explicit note are facts once stated, so their
 * frequency term is 1 rather than a count of repeats.
 */
const CONFIRMED: ReadonlySet<ThresholdSignal> = new Set(['qa_failure', 'remember']);

/** Stage 1: the count reaches the threshold of the candidate's signal type. */
export function passesFrequency(candidate: MemoryCandidate, settings: ObserverSettings): boolean {
  return candidate.frequency >= settings.frequencyThresholds[candidate.signalType];
}

/**
 * Stage 2: the nearest existing memory of the same embedding model, the memory's own id
 * excluded (a deterministic id means a re-promotion is an update of it, not a duplicate).
 * Without a candidate embedding nothing can be compared: novelty 1, the check passes.
 */
export function checkNovelty(
  embedding: CandidateEmbedding | undefined,
  existing: readonly ExistingMemoryVector[],
  ownMemoryId: string,
): NoveltyCheck {
  let maxCosine: number | null = null;
  let nearestMemoryId: string | null = null;
  if (embedding !== undefined) {
    for (const memory of existing) {
      if (memory.memoryId === ownMemoryId || memory.embeddingModel !== embedding.model) continue;
      if (memory.embedding.length !== embedding.vector.length) continue;
      const similarity = cosine(embedding.vector, memory.embedding);
      if (maxCosine === null || similarity > maxCosine) {
        maxCosine = similarity;
        nearestMemoryId = memory.memoryId;
      }
    }
  }
  return {
    maxCosine,
    nearestMemoryId,
    novelty: maxCosine === null ? 1 : 1 - Math.max(0, maxCosine),
  };
}

/**
 * Stage 3: `score = 0.4·f + 0.3·r + 0.3·n`, each term in [0, 1]:
 * - f (frequency) = min(1, count / (2 × threshold)): 0.5 at the type's threshold, 1 at twice it
 *   (so "as often as needed to pass" is half of the strongest evidence); 1 for confirmed sources;
 * - r (recency) = 0.5 ^ (age / recencyHalfLifeDays), age = now − newest evidence (never < 0);
 * - n (novelty) = 1 − max(0, cosine to the nearest existing memory), 1 with nothing to compare.
 * It passes above `scoreThreshold` (0.6), `deadEndScoreThreshold` (0.3) for dead ends.
 */
export function scoreCandidate(
  candidate: MemoryCandidate,
  novelty: NoveltyCheck,
  now: number,
  settings: ObserverSettings,
): ScoreBreakdown {
  const threshold = Math.max(1, settings.frequencyThresholds[candidate.signalType]);
  const frequency = CONFIRMED.has(candidate.signalType)
    ? 1
    : Math.min(1, candidate.frequency / (2 * threshold));
  const ageDays = Math.max(0, now - candidate.lastObservedAt) / DAY_MS;
  const recency = 0.5 ** (ageDays / settings.recencyHalfLifeDays);
  const score = 0.4 * frequency + 0.3 * recency + 0.3 * novelty.novelty;
  return {
    ...novelty,
    frequency,
    recency,
    score,
    threshold:
      candidate.memoryType === 'dead_end'
        ? settings.deadEndScoreThreshold
        : settings.scoreThreshold,
  };
}
