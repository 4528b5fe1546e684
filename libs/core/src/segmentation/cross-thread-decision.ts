import { clamp01 } from './clamp01';
import {
  DEFAULT_CROSS_THREAD_OPTIONS,
  scoreContinuity,
  type ContinuityComponents,
  type ContinuityScore,
  type ContinuityTopicMeasure,
  type CrossThreadCandidate,
  type CrossThreadOpening,
  type CrossThreadOptions,
  type CrossThreadWeights,
} from './cross-thread';
import {
  assessWithTimeout,
  type AssessResult,
  type LlmAssessmentStatus,
  type LlmContinuityAssessment,
  type LlmContinuityAssessor,
} from './cross-thread-llm';

// The LINK / NO_LINK decision on a new thread (seed 004 §2.3): the algorithmic verdict and the
// optional LLM assessment combined, recorded with everything needed to tune it later.

export type LinkVerdict = 'LINK' | 'NO_LINK';
export type LinkOutcome = 'CORRECT' | 'INCORRECT';

export interface AlgorithmicVerdict {
  score: number;
  threshold: number;
}

export interface CombinedLinkDecision {
  decision: LinkVerdict;
  /** The two signals disagreed (seed 004: UNCERTAIN, recorded for tuning). */
  uncertain: boolean;
  /** agreement: both said the same; otherwise the signal that decided. */
  decidedBy: 'agreement' | 'algorithmic' | 'llm';
  /** null when there was no LLM. */
  agreement: boolean | null;
  algorithmic: {
    score: number;
    threshold: number;
    link: boolean;
    /** Distance from the threshold, scaled to [0, 1]; see `algorithmicConfidence`. */
    confidence: number;
  };
  llm: LlmContinuityAssessment | null;
}

/**
 * How sure the algorithmic verdict is: its distance from the threshold, scaled by the room on
 * that side — (score − t) / (1 − t) for a LINK, (t − score) / t for a NO_LINK. 0 at the
 * threshold, 1 at score 1 (or 0). This makes it comparable with an LLM confidence.
 */
export function algorithmicConfidence(score: number, threshold: number): number {
  if (score > threshold) return threshold >= 1 ? 1 : clamp01((score - threshold) / (1 - threshold));
  return threshold <= 0 ? 1 : clamp01((threshold - score) / threshold);
}

/**
 * The decision logic of seed 004 §2.3. The algorithmic verdict is LINK when score > threshold.
 * No LLM → the algorithmic verdict alone (not uncertain). Both agree → that verdict. They
 * disagree → UNCERTAIN, and the signal with the higher confidence decides (the algorithm's
 * confidence is `algorithmicConfidence`, the LLM's its own, clamped to [0, 1]); an exact tie →
 * NO_LINK (a missed link is cheaper than context from an unrelated thread).
 */
export function combineDecisions(
  algorithmic: AlgorithmicVerdict,
  llm: LlmContinuityAssessment | null,
): CombinedLinkDecision {
  const link = algorithmic.score > algorithmic.threshold;
  const algorithmicPart = {
    score: algorithmic.score,
    threshold: algorithmic.threshold,
    link,
    confidence: algorithmicConfidence(algorithmic.score, algorithmic.threshold),
  };
  if (llm === null) {
    return {
      decision: link ? 'LINK' : 'NO_LINK',
      uncertain: false,
      decidedBy: 'algorithmic',
      agreement: null,
      algorithmic: algorithmicPart,
      llm: null,
    };
  }
  const assessment = {
    ...llm,
    confidence: clamp01(llm.confidence),
    keySignals: [...llm.keySignals],
  };
  if (assessment.related === link) {
    return {
      decision: link ? 'LINK' : 'NO_LINK',
      uncertain: false,
      decidedBy: 'agreement',
      agreement: true,
      algorithmic: algorithmicPart,
      llm: assessment,
    };
  }
  let decidedBy: 'algorithmic' | 'llm';
  if (assessment.confidence > algorithmicPart.confidence) decidedBy = 'llm';
  else if (assessment.confidence < algorithmicPart.confidence) decidedBy = 'algorithmic';
  else decidedBy = link ? 'llm' : 'algorithmic'; // the tie goes to whichever said NO_LINK
  const linked = decidedBy === 'llm' ? assessment.related : link;
  return {
    decision: linked ? 'LINK' : 'NO_LINK',
    uncertain: true,
    decidedBy,
    agreement: false,
    algorithmic: algorithmicPart,
    llm: assessment,
  };
}

/** One linking decision with everything needed to tune it later (seed 004 §2.4). Plain JSON. */
export interface LinkDecisionRecord {
  /** `<newThreadId>-><candidateThreadId>`: one decision per new thread. */
  decisionId: string;
  tenantId: string;
  userId: string | null;
  newThreadId: string;
  candidateThreadId: string;
  decidedAt: number;
  algorithmic: {
    score: number;
    threshold: number;
    link: boolean;
    confidence: number;
    components: ContinuityComponents;
    topicMeasure: ContinuityTopicMeasure;
    weights: CrossThreadWeights;
    hoursSinceActivity: number;
  };
  llm: LlmContinuityAssessment | null;
  llmStatus: LlmAssessmentStatus;
  /** Why the LLM counted as absent (timeout, error message, invalid answer); else null. */
  llmError: string | null;
  agreement: boolean | null;
  decision: LinkVerdict;
  uncertain: boolean;
  decidedBy: 'agreement' | 'algorithmic' | 'llm';
  outcome: LinkOutcome | null;
  outcomeAt: number | null;
}

export interface CrossThreadDecisionInput {
  opening: CrossThreadOpening;
  candidates: readonly CrossThreadCandidate[];
  /** Decision time (epoch millis); defaults to `opening.openedAt`. */
  now?: number;
}

export interface CrossThreadDecisionResult {
  /** null when no earlier thread was eligible (nothing to decide, no LLM call). */
  record: LinkDecisionRecord | null;
  /** Every eligible thread, best first. */
  scores: ContinuityScore[];
}

/**
 * Decides whether the new thread continues one of the user's recent threads. The decision is
 * about the best-scoring eligible thread (`scoreContinuity`); the LLM, when configured, assesses
 * that same pair, bounded by `llmTimeoutMs` (the assessor's signal aborts then). An LLM that
 * times out, throws or answers malformed (related not boolean, confidence not finite) counts as
 * absent: the algorithmic verdict decides and `llmStatus` / `llmError` record why.
 */
export async function decideCrossThreadLink(
  input: CrossThreadDecisionInput,
  assessor?: LlmContinuityAssessor | null,
  options: Partial<CrossThreadOptions> = {},
): Promise<CrossThreadDecisionResult> {
  const settings = { ...DEFAULT_CROSS_THREAD_OPTIONS, ...options };
  const scores = scoreContinuity(input.opening, input.candidates, settings);
  const best = scores[0];
  if (best === undefined) return { record: null, scores };
  if (!assessor) return { record: decisionRecord(input, best, NO_LLM, settings), scores };
  const candidate = input.candidates.find((thread) => thread.threadId === best.threadId);
  const turns = [...(candidate?.recentTurns ?? [])];
  const assessed = await assessWithTimeout(
    assessor,
    {
      currentThreadId: input.opening.threadId,
      previousThreadId: best.threadId,
      previousSummary: candidate?.summary ?? null,
      previousTurns: turns.slice(Math.max(0, turns.length - Math.max(0, settings.llmMaxTurns))),
      currentMessage: input.opening.text,
      hoursSincePreviousActivity: best.hoursSinceActivity,
    },
    settings.llmTimeoutMs,
  );
  return { record: decisionRecord(input, best, assessed, settings), scores };
}

/**
 * The decision without an LLM, synchronously: what `decideCrossThreadLink` decides when no
 * assessor is configured (a stream stage can then decide inside its batch loop).
 */
export function decideCrossThreadLinkAlgorithmically(
  input: CrossThreadDecisionInput,
  options: Partial<CrossThreadOptions> = {},
): CrossThreadDecisionResult {
  const settings = { ...DEFAULT_CROSS_THREAD_OPTIONS, ...options };
  const scores = scoreContinuity(input.opening, input.candidates, settings);
  const best = scores[0];
  return { record: best ? decisionRecord(input, best, NO_LLM, settings) : null, scores };
}

const NO_LLM: AssessResult = { assessment: null, status: 'not_configured', error: null };

function decisionRecord(
  input: CrossThreadDecisionInput,
  best: ContinuityScore,
  assessed: AssessResult,
  settings: CrossThreadOptions,
): LinkDecisionRecord {
  const combined = combineDecisions(
    { score: best.score, threshold: settings.threshold },
    assessed.assessment,
  );
  return {
    decisionId: `${input.opening.threadId}->${best.threadId}`,
    tenantId: input.opening.tenantId,
    userId: input.opening.userId,
    newThreadId: input.opening.threadId,
    candidateThreadId: best.threadId,
    decidedAt: input.now ?? input.opening.openedAt,
    algorithmic: {
      ...combined.algorithmic,
      components: { ...best.components },
      topicMeasure: best.topicMeasure,
      weights: { ...settings.weights },
      hoursSinceActivity: best.hoursSinceActivity,
    },
    llm: combined.llm,
    llmStatus: assessed.status,
    llmError: assessed.error,
    agreement: combined.agreement,
    decision: combined.decision,
    uncertain: combined.uncertain,
    decidedBy: combined.decidedBy,
    outcome: null,
    outcomeAt: null,
  };
}
