import type { LinkDecisionRecord, LinkOutcome, LinkVerdict } from './cross-thread-decision';
import { intentKeywords, wordCount } from './intent-keywords';

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
