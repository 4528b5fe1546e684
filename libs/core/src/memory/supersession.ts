import type { Memory, MemoryType } from '@engram/contracts';
import { idOf } from '../ids/deterministic-id';
import { anySameFile } from '../retrieval/file-paths';
import { contentStems } from '../retrieval/recall-merge';
import { isSuperseded, SUPERSEDED_BY_TAG, supersededBy } from './superseded';

/**
 * Supersession (SPEC §6 lifecycle, issue #20): a newer memory about the same subject that
 * contradicts an older one supersedes it. The newer one gets a `supersedes` relation to the
 * older; the older one is demoted, never deleted: its next version is stale from the newer one's
 * creation (so it is never injected and an explicit search shows it penalised) and carries a
 * `superseded-by:` tag naming the newer one (so it is shown as superseded, not as a lost file).
 * Pure: the writer looks the candidates up and writes what this returns.
 *
 * Same subject: same tenant, project and type; related files that overlap (or one side has
 * none); most of the smaller memory's content words shared. Contradiction: the newer one says so
 * ("no longer", "instead", "replaced", "switched from", "from now on", …), or negates a rule the
 * older one states with almost the same words, or restates a choice with another value in the
 * same sentence. A compatible addition (same subject, no contradiction) supersedes nothing. Cycle-safe: only a strictly newer memory supersedes, and a
 * superseded memory supersedes nothing; idempotent: an older memory already superseded is left.
 */

export { isSuperseded, SUPERSEDED_BY_TAG, SUPERSEDED_PREFIX, supersededBy } from './superseded';

export interface SupersessionRule {
  /** Shared content words over the smaller memory's content words, at least. */
  minOverlap: number;
  /** Shared content words, at least. */
  minSharedWords: number;
  /** For a negation without a contradiction cue: the stricter overlap required. */
  minNegationOverlap: number;
  /**
   * A choice restated with another value and no cue ("Orders uses undici for HTTP requests" after
   * "Orders uses axios for …"; "Billing talks to the ledger over a Kafka topic" after "… over
   * REST with JSON bodies"): decisions, preferences and requirements only, the value after a slot
   * marker (`restatesValue`), the rest of the sentence shared with at least this many content
   * words, each value at most `maxRestatedValueWords` words.
   */
  minRestatementSubjectWords: number;
  maxRestatedValueWords: number;
  /** The confidence of the `supersedes` relation written (seed 002 §13's coefficient). */
  relationConfidence: number;
}

export const SUPERSESSION_RULE: SupersessionRule = Object.freeze({
  minOverlap: 0.4,
  minSharedWords: 3,
  minNegationOverlap: 0.6,
  minRestatementSubjectWords: 3,
  maxRestatedValueWords: 10,
  relationConfidence: 0.8,
});

/** Statements that a later statement can contradict (not the aggregates and natural keys). */
export const SUPERSEDABLE_TYPES: ReadonlySet<MemoryType> = new Set<MemoryType>([
  'gotcha',
  'decision',
  'preference',
  'pattern',
  'requirement',
  'error_pattern',
  'module_insight',
  'dead_end',
  'e2e_observation',
]);

/** The types whose statements are choices: a restated choice with another value replaces it. */
const CHOICE_TYPES: ReadonlySet<MemoryType> = new Set<MemoryType>([
  'decision',
  'preference',
  'requirement',
]);

const CONTRADICTION_CUES: readonly RegExp[] = [
  /\bno longer\b/,
  /\binstead\b/,
  /\breplac(?:e|ed|es|ing)\b/,
  /\bswitch(?:ed|es|ing)? (?:from|to|over)\b/,
  /\bmigrat(?:e|ed|es|ing)\b[^.;]*\bfrom\b/,
  /\bmoved? (?:from|away)\b/,
  /\bdeprecat(?:e|ed|es)\b/,
  /\brevers(?:e|ed|es)\b/,
  /\bfrom now on\b/,
  /\bnot any ?more\b/,
  /\bobsolete\b/,
  /\bsupersed(?:e|ed|es)\b/,
  /\bstopped\b/,
];
const NEGATION = /\b(?:not|never|no|cannot|without)\b|n't\b/;
/** Cue words do not count towards the shared subject. */
const CUE_WORDS = contentStems(
  'no longer instead replace replaced switched migrated moved deprecated reversed from now on ' +
    'anymore obsolete superseded stopped',
);

export type SupersessionVerdict =
  | { supersedes: true; cue: string; overlap: number }
  | {
      supersedes: false;
      reason:
        'scope' | 'type' | 'not newer' | 'superseded' | 'files' | 'subject' | 'no contradiction';
    };

/** Whether `newer` supersedes `older` under the rule, and why (or why not). */
export function supersessionVerdict(
  newer: Memory,
  older: Memory,
  rule: SupersessionRule,
): SupersessionVerdict {
  if (
    newer.memoryId === older.memoryId ||
    newer.tenantId !== older.tenantId ||
    newer.projectId !== older.projectId
  ) {
    return { supersedes: false, reason: 'scope' };
  }
  if (newer.memoryType !== older.memoryType || !SUPERSEDABLE_TYPES.has(newer.memoryType)) {
    return { supersedes: false, reason: 'type' };
  }
  if (!(newer.createdAt > older.createdAt)) return { supersedes: false, reason: 'not newer' };
  if (isSuperseded(newer) || isSuperseded(older)) {
    return { supersedes: false, reason: 'superseded' };
  }
  const newerFiles = newer.relatedFiles ?? [];
  const olderFiles = older.relatedFiles ?? [];
  if (newerFiles.length > 0 && olderFiles.length > 0 && !anySameFile(newerFiles, olderFiles)) {
    return { supersedes: false, reason: 'files' };
  }
  const { overlap } = subjectOverlap(newer.content, older.content, rule.minSharedWords);
  if (overlap < rule.minOverlap) return { supersedes: false, reason: 'subject' };
  const text = newer.content.toLowerCase();
  const cue = CONTRADICTION_CUES.find((pattern) => pattern.test(text));
  if (cue) return { supersedes: true, cue: cue.source, overlap };
  if (
    overlap >= rule.minNegationOverlap &&
    NEGATION.test(text) &&
    !NEGATION.test(older.content.toLowerCase())
  ) {
    return { supersedes: true, cue: 'negation', overlap };
  }
  if (CHOICE_TYPES.has(newer.memoryType) && restatesValue(newer.content, older.content, rule)) {
    return { supersedes: true, cue: 'restatement', overlap };
  }
  return { supersedes: false, reason: 'no contradiction' };
}

/**
 * The older memory's next version, demoted by `newer`: stale from the newer one's creation (an
 * earlier staleAt is kept), tagged `superseded-by:<newer id>`, the newer one's event in its
 * provenance. Null when it is already superseded (by this memory or another).
 */
export function supersededVersion(older: Memory, newer: Memory): Memory | null {
  if (isSuperseded(older)) return null;
  return {
    ...older,
    eventId: idOf('superseded', older.memoryId, older.eventId, newer.memoryId),
    staleAt: older.staleAt ?? newer.createdAt,
    tags: [...(older.tags ?? []), SUPERSEDED_BY_TAG + newer.memoryId],
    sourceEventIds: [...new Set([...(older.sourceEventIds ?? []), newer.eventId])],
  };
}

/** The newer memory with its `supersedes` relation to `olderId` (the same object if it has it). */
export function withSupersedesRelation(
  newer: Memory,
  olderId: string,
  rule: SupersessionRule,
): Memory {
  const relations = newer.relations ?? [];
  if (relations.some((r) => r.relationType === 'supersedes' && r.targetMemoryId === olderId)) {
    return newer;
  }
  return {
    ...newer,
    relations: [
      ...relations,
      {
        targetMemoryId: olderId,
        targetFilePath: null,
        relationType: 'supersedes',
        confidence: rule.relationConfidence,
        autoExtracted: true,
      },
    ],
  };
}

export interface SupersessionOutcome {
  /** The memory as it is to be written: with its `supersedes` relations, or demoted itself. */
  memory: Memory;
  /**
   * Next versions of candidates: the older ones it supersedes, demoted; the newer one that
   * supersedes it, with the `supersedes` relation. Candidates already so are left out.
   */
  updated: Memory[];
}

/**
 * A memory being written against the project's other memories (`candidates`, their latest
 * versions): the older ones it supersedes are demoted, and it is demoted itself when a newer
 * candidate supersedes it, so the order memories arrive in does not matter. A supersession
 * already recorded (a `superseded-by:` tag naming the other one) is kept, and its relation
 * written again where the version being written lacks it.
 */
export function resolveSupersession(
  memory: Memory,
  candidates: readonly Memory[],
  rule: SupersessionRule,
): SupersessionOutcome {
  let current = memory;
  const updated: Memory[] = [];
  const byAge = [...candidates].sort(
    (a, b) => a.createdAt - b.createdAt || a.memoryId.localeCompare(b.memoryId),
  );
  for (const candidate of byAge) {
    if (candidate.memoryId === memory.memoryId) continue;
    if (
      supersededBy(current) === candidate.memoryId ||
      supersessionVerdict(candidate, current, rule).supersedes
    ) {
      current = supersededVersion(current, candidate) ?? current;
      const newer = withSupersedesRelation(candidate, current.memoryId, rule);
      if (newer !== candidate) updated.push(newer);
      continue;
    }
    if (
      supersededBy(candidate) === current.memoryId ||
      supersessionVerdict(current, candidate, rule).supersedes
    ) {
      const older = supersededVersion(candidate, current);
      if (older) updated.push(older);
      current = withSupersedesRelation(current, candidate.memoryId, rule);
    }
  }
  return { memory: current, updated };
}

/**
 * Whether two memories are about the same subject, by their content words: shared words over the
 * smaller side's (0 below `minShared` shared words), and how many words each side has that the
 * other lacks. Supersession asks it; so may anything grouping memories by subject.
 */
export function subjectOverlap(
  newer: string,
  older: string,
  minShared: number,
): { overlap: number; newerOnly: number; olderOnly: number } {
  return subjectWordsOverlap(subjectWords(newer), subjectWords(older), minShared);
}

/**
 * `subjectOverlap` of texts already reduced to their `subjectWords`: for a caller comparing one
 * text with many, which reduces each text once.
 */
export function subjectWordsOverlap(
  left: ReadonlySet<string>,
  right: ReadonlySet<string>,
  minShared: number,
): { overlap: number; newerOnly: number; olderOnly: number } {
  let shared = 0;
  for (const word of left) if (right.has(word)) shared += 1;
  const smaller = Math.min(left.size, right.size);
  const overlap = smaller === 0 || shared < minShared ? 0 : shared / smaller;
  return { overlap, newerOnly: left.size - shared, olderOnly: right.size - shared };
}

/**
 * The same statement with another value (see `SupersessionRule.minRestatementSubjectWords`). The value
 * slot starts after a slot marker — a colon ("Convention for imports: …") or a word that
 * introduces a value ("over", "via", "uses", "is", …) — and runs to the end ("Billing talks to
 * the ledger over [a Kafka topic]") or, right after the marker, up to an ending both share
 * ("Orders uses [got] for HTTP requests"). Without a marker ("Billing retries failed webhooks
 * three times" / "… only for 5xx responses") two endings are two facts about one subject.
 */
function restatesValue(newer: string, older: string, rule: SupersessionRule): boolean {
  const left = slotTokens(newer);
  const right = slotTokens(older);
  const shortest = Math.min(left.length, right.length);
  let opening = 0;
  while (opening < shortest && left[opening] === right[opening]) opening += 1;
  let closing = 0;
  while (
    closing < shortest - opening &&
    left[left.length - 1 - closing] === right[right.length - 1 - closing]
  ) {
    closing += 1;
  }
  let slot = opening - 1;
  while (slot >= 0 && !SLOT_MARKERS.has(left[slot])) slot -= 1;
  // One sentence continuing the other is an addition; with a shared ending, the slot lies between
  // the marker and it, so the marker must open it.
  if (opening === shortest || slot < 0 || (closing > 0 && slot !== opening - 1)) return false;
  const newerValue = left.length - slot - 1 - closing;
  const olderValue = right.length - slot - 1 - closing;
  const subject = [...left.slice(0, slot + 1), ...left.slice(left.length - closing)].join(' ');
  return (
    newerValue > 0 &&
    olderValue > 0 &&
    newerValue <= rule.maxRestatedValueWords &&
    olderValue <= rule.maxRestatedValueWords &&
    contentStems(subject).size >= rule.minRestatementSubjectWords
  );
}

/** What starts a statement's value slot. */
const SLOT_MARKERS: ReadonlySet<string> = new Set([
  ':',
  'over',
  'via',
  'through',
  'using',
  'uses',
  'use',
  'with',
  'is',
  'are',
  'on',
  'as',
  'by',
]);

/** Words, and the colons that separate a statement's subject from its value. */
function slotTokens(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+|:/gu) ?? [];
}

/** A text's content words (stemmed), without the contradiction cues: what its subject is. */
export function subjectWords(text: string): Set<string> {
  const words = contentStems(text);
  for (const cue of CUE_WORDS) words.delete(cue);
  return words;
}
