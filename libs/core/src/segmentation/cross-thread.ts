import { entityKey, extractEntities } from './entities';
import { intentKeywords, jaccard, wordCount } from './intent-keywords';
import { embeddingCosine, overlapCoefficient } from './topic-similarity';

/**
 * Cross-thread linking (seed 004 §2.3–2.4, SPEC §4.3). When a new thread opens, its continuity
 * with the same user's threads of the last 24 h is scored algorithmically; an optional LLM
 * assessment runs alongside; the two are combined into one LINK / NO_LINK decision that records
 * both scores, so later user feedback (an outcome) can tune the threshold.
 *
 * Split for a pure core: `scoreContinuity` and `combineDecisions` are pure and synchronous;
 * `decideCrossThreadLink` is the one async step (it awaits the LLM, bounded by a timeout).
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

/** What the LLM is asked (seed 004 §2.3 PATH B). */
export interface ContinuityAssessmentInput {
  currentThreadId: string;
  previousThreadId: string;
  previousSummary: string | null;
  /** The previous thread's last turns, oldest first. */
  previousTurns: string[];
  currentMessage: string;
  hoursSincePreviousActivity: number;
}

/** The LLM's answer (seed 004 §2.3). */
export interface LlmContinuityAssessment {
  related: boolean;
  /** 0..1. */
  confidence: number;
  reasoning: string;
  /** What made it decide. */
  keySignals: string[];
}

/** An LLM that judges whether two threads are one conversation. Optional. */
export interface LlmContinuityAssessor {
  /** `signal` aborts when the decision stops waiting (timeout); implementations may ignore it. */
  assess(input: ContinuityAssessmentInput, signal?: AbortSignal): Promise<LlmContinuityAssessment>;
}

export type LinkVerdict = 'LINK' | 'NO_LINK';
export type LinkOutcome = 'CORRECT' | 'INCORRECT';
/** ok: the LLM answered; the others count as no LLM. */
export type LlmAssessmentStatus = 'ok' | 'not_configured' | 'timeout' | 'error' | 'invalid';

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

const MAX_LLM_ERROR_CHARS = 200;

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

interface AssessResult {
  assessment: LlmContinuityAssessment | null;
  status: LlmAssessmentStatus;
  error: string | null;
}

async function assessWithTimeout(
  assessor: LlmContinuityAssessor,
  input: ContinuityAssessmentInput,
  timeoutMs: number,
): Promise<AssessResult> {
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  // A non-finite timeout (Infinity) waits for the answer, however long it takes.
  const timedOut = new Promise<'timeout'>((resolve) => {
    if (Number.isFinite(timeoutMs)) {
      timer = setTimeout(() => resolve('timeout'), Math.max(0, timeoutMs));
    }
  });
  // A synchronous throw becomes a rejection; a late rejection after the timeout is swallowed.
  const answer = Promise.resolve()
    .then(() => assessor.assess(input, controller.signal))
    .then(
      (assessment) => ({ ok: true as const, assessment }),
      (error: unknown) => ({ ok: false as const, error }),
    );
  try {
    const result = await Promise.race([answer, timedOut]);
    if (result === 'timeout') {
      controller.abort();
      return { assessment: null, status: 'timeout', error: `no answer within ${timeoutMs} ms` };
    }
    if (!result.ok) {
      return { assessment: null, status: 'error', error: errorText(result.error) };
    }
    const problem = assessmentProblem(result.assessment);
    if (problem !== null) return { assessment: null, status: 'invalid', error: problem };
    const { related, confidence, reasoning, keySignals } = result.assessment;
    return {
      assessment: {
        related,
        confidence: clamp01(confidence),
        reasoning: typeof reasoning === 'string' ? reasoning : '',
        keySignals: Array.isArray(keySignals)
          ? keySignals.filter((signal): signal is string => typeof signal === 'string')
          : [],
      },
      status: 'ok',
      error: null,
    };
  } finally {
    clearTimeout(timer);
  }
}

function assessmentProblem(assessment: unknown): string | null {
  if (typeof assessment !== 'object' || assessment === null) return 'answer is not an object';
  const { related, confidence } = assessment as Record<string, unknown>;
  if (typeof related !== 'boolean') return 'related is not a boolean';
  if (typeof confidence !== 'number' || !Number.isFinite(confidence)) {
    return 'confidence is not a finite number';
  }
  return null;
}

function errorText(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return text.length > MAX_LLM_ERROR_CHARS ? `${text.slice(0, MAX_LLM_ERROR_CHARS - 1)}…` : text;
}

// --- Outcomes (seed 004 §2.4 "Outcome Validation") -------------------------------------------

/** The user says the linked context was wrong ("that's not what I meant"). */
const REJECTS_LINK: readonly RegExp[] = [
  /\bnot what i (?:meant|mean|was asking|asked|was talking about)\b/,
  /\b(?:that'?s|that is|this is|it'?s|it is|that was|this was)\s+(?:(?:completely|totally|entirely|a)\s+)?(?:unrelated|not related|irrelevant|a different (?:topic|thing|issue|question|project|conversation))\b/,
  /\bunrelated (?:to (?:this|that|what)|topic|thread|conversation|question)\b/,
  /\b(?:wrong|different) (?:context|thread|conversation|chat|topic|project)\b/,
  /\bnothing to do with\b/,
  /\bi(?:'m| am) not (?:asking|talking) about\b/,
  /\bi wasn'?t (?:asking|talking) about\b/,
  /\b(?:forget|ignore) (?:about )?(?:that|the (?:previous|earlier|last|old)|what we|our (?:previous|earlier|last))\b/,
  /\b(?:new|separate|fresh) (?:topic|question|conversation|thread)\b/,
  /\bstart (?:over|fresh|from scratch)\b/,
];

/** The user refers back to an earlier conversation ("didn't we talk about this?"). */
const REFERS_BACK: readonly RegExp[] = [
  /\b(?:didn'?t|did not|haven'?t|have not) (?:we|i|you) (?:already )?(?:talk|talked|discuss|discussed|speak|spoke|chat|chatted|go over|went over|cover|covered|look|looked)\b/,
  /\b(?:we|i|you) (?:already|just) (?:talked|discussed|went over|covered|looked at|did|fixed|said|told|showed|mentioned)\b/,
  /\b(?:like|as) (?:we|i|you) (?:discussed|talked about|said|mentioned|agreed|decided|planned)\b/,
  /\b(?:like|as) (?:before|last time|earlier|previously)\b/,
  /\bremember (?:when|that|what|the)\b/,
  /\b(?:last time|earlier today|this morning|yesterday) (?:we|i|you)\b/,
  /\b(?:our|the|that) (?:previous|earlier|last|other) (?:conversation|chat|thread|discussion|session)\b/,
  /\b(?:where (?:we|i) left off|where were we)\b/,
  /\b(?:back to|continuing|continue with|picking up) (?:the|our|what|where)\b/,
  /\bsame (?:thing |issue |problem )?as (?:before|earlier|last time|yesterday)\b/,
];

export interface OutcomeContext {
  /**
   * Intent keywords of the earlier thread the decision was about (its linked or rejected
   * context). With them, a linked decision can be judged by topic too.
   */
  contextKeywords: readonly string[];
}

/** Follow-ups sharing at least this share of their keywords with the context stay on topic. */
const ON_TOPIC_SHARE = 0.2;
/** A NO_LINK follow-up sharing this much of its keywords with the other thread is ambiguous. */
const SAME_TOPIC_SHARE = 0.5;
/** A follow-up needs this many keywords before its topic (or lack of one) is evidence. */
const MIN_TOPIC_KEYWORDS = 3;
const TERSE_WORDS = 5;

/**
 * Classifies a follow-up user prompt of the new thread as evidence about a linking decision
 * (seed 004 §2.4), or null when it is no evidence:
 *
 * After a LINK:
 * - "that's not what I meant" / "that's unrelated" / "wrong context" / "new topic" → INCORRECT;
 * - it refers back ("like we discussed", "as before") → CORRECT (it uses the linked context);
 * - with `context`: a follow-up of ≥ 3 keywords that shares none with the linked thread →
 *   INCORRECT (the user switched to a different topic); sharing ≥ 20 % of its keywords → CORRECT;
 * - without `context`: a non-terse follow-up → CORRECT (the user continued naturally);
 * - anything else (terse "ok", "yes") → null.
 *
 * After a NO_LINK:
 * - it refers back ("didn't we talk about this?", "like we discussed", "as before") →
 *   INCORRECT (a missed link);
 * - with `context`: sharing ≥ 50 % of its keywords with the unlinked thread → null (the user is
 *   back on that topic without saying so: not evidence either way);
 * - a non-terse follow-up → CORRECT (a fresh conversation, or a new topic);
 * - anything else → null.
 */
export function classifyOutcome(
  followUpPromptText: string,
  decision: LinkVerdict,
  context?: OutcomeContext,
): LinkOutcome | null {
  const text = followUpPromptText
    .toLowerCase()
    .replace(/[\u2018\u2019\u02bc]/g, "'")
    .replace(/\s+/g, ' ')
    .trim();
  if (text === '') return null;
  const rejects = REJECTS_LINK.some((pattern) => pattern.test(text));
  const refersBack = REFERS_BACK.some((pattern) => pattern.test(text));
  const terse = wordCount(text) < TERSE_WORDS;
  const keywords = intentKeywords(followUpPromptText);
  const contextKeywords = context ? new Set(context.contextKeywords) : null;
  const sharedShare =
    contextKeywords === null || keywords.length === 0
      ? null
      : keywords.filter((keyword) => contextKeywords.has(keyword)).length / keywords.length;

  if (decision === 'LINK') {
    if (rejects) return 'INCORRECT';
    if (refersBack) return 'CORRECT';
    if (terse) return null;
    if (sharedShare === null) return contextKeywords === null ? 'CORRECT' : null;
    if (sharedShare === 0 && keywords.length >= MIN_TOPIC_KEYWORDS) return 'INCORRECT';
    return sharedShare >= ON_TOPIC_SHARE ? 'CORRECT' : null;
  }
  if (refersBack) return 'INCORRECT';
  if (terse) return null;
  if (sharedShare !== null && sharedShare >= SAME_TOPIC_SHARE) return null;
  return 'CORRECT';
}

/**
 * The record with its outcome. The first definitive signal wins: a null outcome, or a record that
 * already has one, comes back unchanged.
 */
export function applyLinkOutcome(
  record: LinkDecisionRecord,
  outcome: LinkOutcome | null,
  at: number,
): LinkDecisionRecord {
  if (outcome === null || record.outcome !== null) return record;
  return { ...record, outcome, outcomeAt: at };
}

// --- Tuning (seed 004 §2.4 "Tuning Process") -------------------------------------------------

export interface LinkConfusion {
  truePositives: number;
  falsePositives: number;
  trueNegatives: number;
  falseNegatives: number;
  /** FP / (FP + TN): unrelated threads that were linked; null without unrelated pairs. */
  falsePositiveRate: number | null;
  /** FN / (FN + TP): related threads that were not linked; null without related pairs. */
  falseNegativeRate: number | null;
  /** (TP + TN) / all; null without outcomes. */
  accuracy: number | null;
}

export interface LinkTuningOptions {
  /** The threshold in force; defaults to that of the latest record, else 0.7. */
  currentThreshold: number;
  /** Grid step of the threshold sweep over [0, 1]. */
  step: number;
  falsePositiveCost: number;
  falseNegativeCost: number;
  /** Fewer outcomes than this: the proposal is reported but `enoughData` is false. */
  minOutcomes: number;
}

export interface LinkTuningReport {
  decisions: number;
  withOutcome: number;
  /** Among decisions with outcomes: the pairs that really were one conversation. */
  related: number;
  unrelated: number;
  currentThreshold: number;
  proposedThreshold: number;
  /** The algorithmic verdict (score > threshold) at the current threshold. */
  current: LinkConfusion;
  /** The algorithmic verdict at the proposed threshold. */
  proposed: LinkConfusion;
  /** The decisions actually taken (with the LLM). */
  finalDecisions: LinkConfusion;
  /** Where algorithm and LLM disagreed: who was right (seed 004 tuning step 1). */
  disagreements: { total: number; algorithmicCorrect: number; llmCorrect: number };
  enoughData: boolean;
}

export const DEFAULT_LINK_TUNING_OPTIONS: Readonly<Omit<LinkTuningOptions, 'currentThreshold'>> =
  Object.freeze({ step: 0.01, falsePositiveCost: 1, falseNegativeCost: 1, minOutcomes: 20 });

/**
 * False-positive / false-negative rates of the decisions with an outcome, and a proposed
 * threshold. Ground truth: LINK + CORRECT and NO_LINK + INCORRECT are related pairs; LINK +
 * INCORRECT and NO_LINK + CORRECT are not. The proposal sweeps thresholds t = 0, step, 2·step, …,
 * 1 over the recorded algorithmic scores (LINK iff score > t) and takes the one with the least
 * cost (falsePositiveCost · FP + falseNegativeCost · FN); ties go to the threshold closest to the
 * current one, then to the higher. Without outcomes the current threshold is proposed.
 */
export function tuningReport(
  records: readonly LinkDecisionRecord[],
  options: Partial<LinkTuningOptions> = {},
): LinkTuningReport {
  const settings = { ...DEFAULT_LINK_TUNING_OPTIONS, ...options };
  const latest = [...records].sort((a, b) => b.decidedAt - a.decidedAt)[0];
  const currentThreshold =
    options.currentThreshold ??
    latest?.algorithmic.threshold ??
    DEFAULT_CROSS_THREAD_OPTIONS.threshold;
  const judged = records
    .filter((record) => record.outcome !== null)
    .map((record) => ({ record, related: isRelated(record) }));

  const at = (threshold: number): LinkConfusion =>
    confusion(judged.map(({ record, related }) => [record.algorithmic.score > threshold, related]));
  const cost = (matrix: LinkConfusion): number =>
    settings.falsePositiveCost * matrix.falsePositives +
    settings.falseNegativeCost * matrix.falseNegatives;

  let proposedThreshold = currentThreshold;
  if (judged.length > 0 && settings.step > 0) {
    const steps = Math.round(1 / settings.step);
    let bestCost = Infinity;
    for (let i = 0; i <= steps; i += 1) {
      const threshold = Math.min(1, Number((i * settings.step).toFixed(6)));
      const thresholdCost = cost(at(threshold));
      const closer =
        Math.abs(threshold - currentThreshold) < Math.abs(proposedThreshold - currentThreshold);
      const asClose =
        Math.abs(threshold - currentThreshold) === Math.abs(proposedThreshold - currentThreshold);
      if (
        thresholdCost < bestCost ||
        (thresholdCost === bestCost && (closer || (asClose && threshold > proposedThreshold)))
      ) {
        bestCost = thresholdCost;
        proposedThreshold = threshold;
      }
    }
  }

  const disagreements = judged.filter(({ record }) => record.agreement === false && record.llm);
  return {
    decisions: records.length,
    withOutcome: judged.length,
    related: judged.filter(({ related }) => related).length,
    unrelated: judged.filter(({ related }) => !related).length,
    currentThreshold,
    proposedThreshold,
    current: at(currentThreshold),
    proposed: at(proposedThreshold),
    finalDecisions: confusion(
      judged.map(({ record, related }) => [record.decision === 'LINK', related]),
    ),
    disagreements: {
      total: disagreements.length,
      algorithmicCorrect: disagreements.filter(
        ({ record, related }) => record.algorithmic.link === related,
      ).length,
      llmCorrect: disagreements.filter(({ record, related }) => record.llm?.related === related)
        .length,
    },
    enoughData: judged.length >= settings.minOutcomes,
  };
}

function isRelated(record: LinkDecisionRecord): boolean {
  return (record.decision === 'LINK') === (record.outcome === 'CORRECT');
}

function confusion(pairs: readonly (readonly [boolean, boolean])[]): LinkConfusion {
  let truePositives = 0;
  let falsePositives = 0;
  let trueNegatives = 0;
  let falseNegatives = 0;
  for (const [linked, related] of pairs) {
    if (linked && related) truePositives += 1;
    else if (linked) falsePositives += 1;
    else if (related) falseNegatives += 1;
    else trueNegatives += 1;
  }
  const ratio = (part: number, whole: number): number | null => (whole === 0 ? null : part / whole);
  return {
    truePositives,
    falsePositives,
    trueNegatives,
    falseNegatives,
    falsePositiveRate: ratio(falsePositives, falsePositives + trueNegatives),
    falseNegativeRate: ratio(falseNegatives, falseNegatives + truePositives),
    accuracy: ratio(truePositives + trueNegatives, pairs.length),
  };
}

function clamp01(value: number): number {
  return Number.isNaN(value) ? 0 : Math.min(1, Math.max(0, value));
}

/** Locale-independent string order (UTF-16 code units). */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
