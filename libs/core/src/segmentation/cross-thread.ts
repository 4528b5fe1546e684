import { entityKey, extractEntities } from './entities';
import { intentKeywords, jaccard } from './intent-keywords';
import { embeddingCosine, overlapCoefficient } from './topic-similarity';
import { clamp01 } from './clamp01';

/**
 * Cross-thread linking (seed 004 §2.3–2.4, SPEC §4.3). When a new thread opens, its continuity
 * with the same user's threads of the last 24 h is scored algorithmically; an optional LLM
 * assessment runs alongside; the two are combined into one LINK / NO_LINK decision that records
 * both scores, so later user feedback (an outcome) can tune the threshold.
 *
 * Split for a pure core: `scoreContinuity` (here) and `combineDecisions` are pure and synchronous;
 * `decideCrossThreadLink` is the one async step (it awaits the LLM, bounded by a timeout). The
 * decision is in `cross-thread-decision.ts`, the bounded LLM call in `cross-thread-llm.ts`, the
 * outcomes of decisions in `cross-thread-outcome.ts`, the threshold tuning in
 * `cross-thread-tuning.ts`.
 */

const HOUR_MS = 60 * 60 * 1000;

export interface CrossThreadWeights {
  keyword: number;
  entity: number;
  topic: number;
  recency: number;
}

export interface CrossThreadOptions {
  /** seed 004: 0.3 keyword + 0.3 entity + 0.2 topic + 0.2 recency. */
  weights: CrossThreadWeights;
  /** Algorithmic LINK when the score is strictly greater (seed 004: 0.7). */
  threshold: number;
  /** Only threads active within this window before the new one opened (seed 004: 24 h). */
  windowMs: number;
  /** How long the LLM may take; after that it counts as absent. */
  llmTimeoutMs: number;
  /** Previous turns of the candidate thread passed to the LLM (the last N). */
  llmMaxTurns: number;
}

export const DEFAULT_CROSS_THREAD_OPTIONS: Readonly<CrossThreadOptions> = Object.freeze({
  weights: Object.freeze({ keyword: 0.3, entity: 0.3, topic: 0.2, recency: 0.2 }),
  threshold: 0.7,
  windowMs: 24 * HOUR_MS,
  llmTimeoutMs: 10_000,
  llmMaxTurns: 5,
});

/** The thread that just opened, with its first user turn. */
export interface CrossThreadOpening {
  threadId: string;
  tenantId: string;
  /** Threads are per user; a thread without a user is never linked. */
  userId: string | null;
  /** Epoch millis of the first turn. */
  openedAt: number;
  /** The first user turn. */
  text: string;
  /** Defaults to `intentKeywords(text)`. */
  keywords?: readonly string[];
  /** Defaults to `extractEntities(text)`. */
  entities?: readonly string[];
  embedding?: readonly number[] | null;
}

/** An earlier thread of the user (thread metadata, SPEC §4.1). */
export interface CrossThreadCandidate {
  threadId: string;
  tenantId: string;
  userId: string | null;
  lastActivityAt: number;
  summary?: string | null;
  /** The thread's last user turns, oldest first. */
  recentTurns?: readonly string[];
  /** Defaults to `intentKeywords` of the summary and recent turns. */
  keywords?: readonly string[];
  /** Defaults to `extractEntities` of the summary and recent turns. */
  entities?: readonly string[];
  embedding?: readonly number[] | null;
}

export interface ContinuityComponents {
  keyword: number;
  entity: number;
  topic: number;
  recency: number;
}

/** How the topic component was measured. */
export type ContinuityTopicMeasure = 'cosine' | 'keyword-overlap';

export interface ContinuityScore {
  threadId: string;
  /** Σ weight × component, in [0, 1] with weights summing to 1. */
  score: number;
  components: ContinuityComponents;
  topicMeasure: ContinuityTopicMeasure;
  hoursSinceActivity: number;
  /** score > threshold. */
  link: boolean;
}

/**
 * Scores the new thread against each eligible earlier thread, best first. Eligible: same tenant,
 * same (non-null) user, another thread id, last activity at most `windowMs` before `openedAt`
 * and not after it. Components, each in [0, 1]:
 * - keyword: Jaccard of the intent keyword sets (seed 000 `intent_keywords`);
 * - entity: Jaccard of the entity sets (`extractEntities`, case-insensitive); 0 when neither
 *   side names an entity;
 * - topic: cosine of the embeddings when both have one (negative → 0); otherwise the overlap
 *   coefficient |A ∩ B| / min(|A|, |B|) of the new thread's keywords A and the earlier thread's
 *   keywords plus the keywords of its summary B — how much of the (short) new turn the earlier
 *   thread's vocabulary already contains;
 * - recency: linear decay over the window, 1 − hoursSinceActivity / windowHours (seed 004 gives
 *   no curve, only the 24 h window): 1 for a thread active at the same moment, 0 at the edge.
 * Ties on score go to the more recently active thread, then the smaller thread id.
 */
export function scoreContinuity(
  opening: CrossThreadOpening,
  candidates: readonly CrossThreadCandidate[],
  options: Partial<CrossThreadOptions> = {},
): ContinuityScore[] {
  const settings = { ...DEFAULT_CROSS_THREAD_OPTIONS, ...options };
  const { weights, threshold, windowMs } = settings;
  if (opening.userId === null) return [];
  const keywords = opening.keywords ?? intentKeywords(opening.text);
  const entities = (opening.entities ?? extractEntities(opening.text)).map(entityKey);

  return candidates
    .filter(
      (candidate) =>
        candidate.tenantId === opening.tenantId &&
        candidate.userId === opening.userId &&
        candidate.threadId !== opening.threadId &&
        candidate.lastActivityAt <= opening.openedAt &&
        opening.openedAt - candidate.lastActivityAt <= windowMs,
    )
    .map((candidate) => {
      const features = candidateFeatures(candidate);
      const cosine = embeddingCosine(opening.embedding, candidate.embedding);
      const elapsedMs = opening.openedAt - candidate.lastActivityAt;
      const components: ContinuityComponents = {
        keyword: jaccard(keywords, features.keywords),
        entity: jaccard(entities, features.entities.map(entityKey)),
        topic:
          cosine !== null
            ? Math.max(0, cosine)
            : overlapCoefficient(keywords, [...features.keywords, ...features.summaryKeywords]),
        recency: windowMs > 0 ? clamp01(1 - elapsedMs / windowMs) : 1,
      };
      const score =
        weights.keyword * components.keyword +
        weights.entity * components.entity +
        weights.topic * components.topic +
        weights.recency * components.recency;
      return {
        threadId: candidate.threadId,
        score,
        components,
        topicMeasure: cosine !== null ? ('cosine' as const) : ('keyword-overlap' as const),
        hoursSinceActivity: elapsedMs / HOUR_MS,
        link: score > threshold,
        lastActivityAt: candidate.lastActivityAt,
      };
    })
    .sort(
      (a, b) =>
        b.score - a.score ||
        b.lastActivityAt - a.lastActivityAt ||
        compareText(a.threadId, b.threadId),
    )
    .map(({ lastActivityAt: _lastActivityAt, ...score }) => score);
}

function candidateFeatures(candidate: CrossThreadCandidate): {
  keywords: readonly string[];
  entities: readonly string[];
  summaryKeywords: readonly string[];
} {
  const text = [candidate.summary ?? '', ...(candidate.recentTurns ?? [])].join('\n');
  return {
    keywords: candidate.keywords ?? intentKeywords(text),
    entities: candidate.entities ?? extractEntities(text),
    summaryKeywords: candidate.summary ? intentKeywords(candidate.summary) : [],
  };
}

/** Locale-independent string order (UTF-16 code units). */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
