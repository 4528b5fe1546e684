import { wordCount } from '../../segmentation/intent-keywords';
import { filePathsIn } from '../files-in-text';
import { truncateChars } from '../tokens';
import type { PromptEntry } from '../transcript';
import type { DistilledFact, FactKind, Priority } from '../types';

/**
 * User assertions (seed 001 rules 2 and 5): what the developer STATES is durable; what they ask is
 * not. Each sentence of a user prompt is classified, in this order: a question (skipped), a
 * correction, a rule, a decision (🔴 with a rationale, else 🟡), a state change (seed 001 rule 3:
 * what replaced what, what is no longer so), a preference, an idea. Patterns run on the
 * lower-cased sentence with typographic apostrophes made plain.
 */
export interface Assertion {
  kind: Extract<
    FactKind,
    'rule' | 'preference' | 'correction' | 'decision' | 'state-change' | 'idea'
  >;
  priority: Priority;
  sentence: string;
}

const LEAD = String.raw`^(?:(?:please|and|but|so|also|ok|okay|then|just|oh|remember|note|hey)[,\s]+)*`;

const CORRECTION: readonly RegExp[] = [
  /^(?:no|nope|nah|wrong|not quite|not really)\b[\s,.!:;—-]/,
  /^actually\b/,
  /^wait\b[,\s]/,
  /\bthat'?s (?:not (?:right|correct|true|it|what)|wrong|incorrect)\b/,
  /\bthat is (?:not (?:right|correct|true|what)|wrong|incorrect)\b/,
  /\b(?:i said|i meant|you misunderstood|you got it wrong|you'?re wrong)\b/,
];

const RULE: readonly RegExp[] = [
  new RegExp(`${LEAD}(?:always|never|don'?t|do not|stop|avoid)\\b`),
  /\b(?:we|you)\s+(?:should\s+|must\s+)?(?:always|never)\b/,
  /\b(?:we|you)\s+(?:shouldn'?t|should\s+not|must\s+not|mustn'?t|must)\b/,
  /\b(?:should|must)\s+(?:always|never)\b/,
  /\b(?:always|never)\s+(?:use|run|call|commit|push|import|add|write|put|keep|touch|edit|change|delete|merge|mock|skip|disable|force|rebase|deploy)\b/,
  /\bmake sure (?:to|you|we|that)\b/,
  /\bfrom now on\b/,
  // "you don't need to git init", "no need to transpile", "instead, stage the changes".
  /\b(?:you|we)\s+(?:don'?t|do\s+not|won'?t)\s+need\s+to\b/,
  /\b(?:there'?s\s+)?no\s+need\s+(?:to|for)\b/,
  new RegExp(`${LEAD}instead\\b`),
];

const STATE_CHANGE: readonly RegExp[] = [
  /\bno\s+longer\b/,
  /\bin\s+favou?r\s+of\b/,
  /\b(?:we|i)(?:'ve|\s+have)?\s+(?:already\s+)?(?:moved|switched|migrated|replaced|removed|dropped|deprecated|upgraded|downgraded|renamed|retired)\b/,
  /\b(?:we|i)\s+already\s+(?:have|use|run)\b/,
  /\bis\s+(?:now\s+)?(?:enabled|disabled|on|off)\s+by\s+default\b/,
  /\b(?:is|are)\s+(?:now\s+)?deprecated\b/,
];

const PREFERENCE: readonly RegExp[] = [
  /\bi(?:'d| would)? (?:prefer|rather)\b/,
  /\bi (?:like|want|hate|dislike)\b/,
  /\b(?:use|prefer|pick|choose)\b.+\b(?:instead of|rather than|over)\b/,
  /\binstead of\b.+\buse\b/,
];

const DECISION: readonly RegExp[] = [
  /\blet'?s\s+(?:just\s+)?(?:use|go\s+with|switch|stick\s+with|keep|drop|move\s+to|adopt|replace)\b/,
  /\b(?:we'?ll|we\s+will|i'?ll|i\s+will)\s+(?:go\s+with|use|stick\s+with|switch\s+to|keep)\b/,
  /\b(?:go|going)\s+with\b/,
  /\b(?:we|i)(?:\s+have|'ve)?\s+(?:decided|chose|agreed|settled)\b/,
  /\bdecision\s*:/,
  // A choice stated with its alternative or its reason: "let's move X to Redis instead of Postgres".
  /\b(?:let'?s|we'?ll|we\s+will|we\s+should)\b.+\b(?:instead\s+of|rather\s+than|because)\b/,
];

const IDEA: readonly RegExp[] = [
  /\b(?:maybe later|worth considering|at some point|nice to have|might be worth|could consider|later we could)\b/,
];

const RATIONALE =
  /\b(?:because|since|so that|as it|as they|due to|otherwise|which means)\b|\s[—-]\s/;
const QUESTION_START =
  /^(?:what|why|how|when|where|which|who|is|are|does|do(?!\s+not\b)|did|can|could|would|should|will|shall|have|has)\b/;

const MIN_WORDS = 3;
const MAX_SENTENCE_CHARS = 300;

/**
 * The assertions of one user prompt, in order, at most one per sentence. A correction takes the
 * plain sentence after it along ("No, don't touch the TTL. The clock skew is the problem."): what
 * the user corrects to matters as much as what they reject.
 */
export function classifyAssertions(text: string): Assertion[] {
  const assertions: Assertion[] = [];
  const sentences = sentencesOf(text);
  for (let i = 0; i < sentences.length; i += 1) {
    const assertion = classifySentence(sentences[i]);
    if (assertion === null) continue;
    const next = sentences[i + 1];
    if (
      assertion.kind === 'correction' &&
      next !== undefined &&
      !next.endsWith('?') &&
      classifySentence(next) === null
    ) {
      assertion.sentence = truncateChars(`${assertion.sentence} ${next}`, MAX_SENTENCE_CHARS);
      i += 1;
    }
    assertions.push(assertion);
  }
  return assertions;
}

/** The assertion a sentence makes, or null (questions, chatter, too short). */
export function classifySentence(sentence: string): Assertion | null {
  const normalized = sentence.toLowerCase().replace(/[\u2018\u2019\u02bc]/g, "'");
  if (sentence.endsWith('?') || (QUESTION_START.test(normalized) && !/[.!]$/.test(sentence))) {
    return null;
  }
  if (wordCount(sentence) < MIN_WORDS) return null;
  const matches = (patterns: readonly RegExp[]): boolean =>
    patterns.some((p) => p.test(normalized));
  const text = truncateChars(sentence, MAX_SENTENCE_CHARS);
  if (matches(CORRECTION)) return { kind: 'correction', priority: '🔴', sentence: text };
  if (matches(RULE)) return { kind: 'rule', priority: '🔴', sentence: text };
  if (matches(DECISION)) {
    return { kind: 'decision', priority: RATIONALE.test(normalized) ? '🔴' : '🟡', sentence: text };
  }
  if (matches(STATE_CHANGE)) return { kind: 'state-change', priority: '🔴', sentence: text };
  if (matches(PREFERENCE)) return { kind: 'preference', priority: '🔴', sentence: text };
  if (matches(IDEA)) return { kind: 'idea', priority: '🟢', sentence: text };
  return null;
}

/**
 * Sentences split at . ! ? followed by a space and at line breaks; list bullets stripped; code
 * fences skipped. A bare "No." or "Actually," joins the sentence after it, so the correction keeps
 * what it corrects to.
 */
export function sentencesOf(text: string): string[] {
  const withoutCode = text.replace(/```[\s\S]*?(?:```|$)/g, '\n');
  const raw = withoutCode
    .split(/(?<=[.!?])\s+|\r?\n+/)
    .map((s) =>
      s
        .replace(/^\s*(?:[-*•>]|\d+[.)])\s+/, '')
        .replace(/\s+/g, ' ')
        .trim(),
    )
    .filter((s) => s !== '');
  const sentences: string[] = [];
  for (let i = 0; i < raw.length; i += 1) {
    if (/^(?:no|nope|nah|actually|wait|wrong)[.,!:]?$/i.test(raw[i]) && i + 1 < raw.length) {
      sentences.push(`${raw[i]} ${raw[i + 1]}`);
      i += 1;
    } else {
      sentences.push(raw[i]);
    }
  }
  return sentences;
}

const PHRASING: Readonly<Record<Assertion['kind'], string>> = {
  correction: 'Correction',
  rule: 'Rule',
  preference: 'Preference',
  decision: 'Decision',
  'state-change': 'Change',
  idea: 'Idea, not committed to',
};

/** Words that only open the sentence ("no,", "ok so", "yes,"): the label says what it is. */
const OPENERS =
  /^(?:(?:no|nope|nah|wrong|actually|wait|ok(?:ay)?|yes|yeah|so|and|but|also|oh|hey|please|remember|note)\b[\s,.!:;—-]*)+/i;

/** The user's sentence as a statement, in their words: markup and opening words gone. */
export function statementOf(sentence: string): string {
  const plain = sentence
    .replace(/<\/?[a-z][\w-]*>/gi, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  const opened = plain.replace(OPENERS, '').trim();
  return wordCount(opened) >= MIN_WORDS ? opened : plain;
}

/**
 * One fact per assertion of the user prompts: what it is (correction, rule, decision …) and the
 * user's own words (seed 001 rule 5), e.g. "Correction: don't mock Date.now in the refresh test,
 * use vitest fake timers instead of the manual clock stub".
 */
export function assertionFacts(userPrompts: readonly PromptEntry[]): DistilledFact[] {
  const facts: DistilledFact[] = [];
  for (const prompt of userPrompts) {
    for (const assertion of classifyAssertions(prompt.text)) {
      facts.push({
        priority: assertion.priority,
        time: prompt.time,
        at: prompt.timestamp,
        text: `${PHRASING[assertion.kind]}: ${statementOf(assertion.sentence)}`,
        kind: assertion.kind,
        sourceEventIds: [prompt.eventId],
        relatedFiles: filePathsIn(assertion.sentence),
      });
    }
  }
  return facts;
}
