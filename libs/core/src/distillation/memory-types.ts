import type { MemoryType } from '@engram/contracts';
import type { DistilledFact, Priority } from './types';

/** The memory types a distilled fact can become (issue 6). */
export type DistilledMemoryType = Extract<
  MemoryType,
  'preference' | 'decision' | 'gotcha' | 'error_pattern' | 'pattern' | 'work_state'
>;

/** Confidence by priority: durable facts are trusted more than working context. */
export const PRIORITY_CONFIDENCE: Readonly<Record<Priority, number>> = {
  '🔴': 0.85,
  '🟡': 0.6,
  '🟢': 0.35,
};

/**
 * Half-life in days by type (SPEC §6, seed 002 §13: work_state 7 d, global memories none). The
 * seed fixes only work_state; the others are Engram's choice: an error pattern goes stale as
 * tooling moves (30 d), a gotcha or pattern lasts about a quarter (90 d, like dead_end), and
 * decisions and preferences are global and do not decay (null).
 */
export const DISTILLED_HALF_LIFE_DAYS: Readonly<Record<DistilledMemoryType, number | null>> = {
  work_state: 7,
  error_pattern: 30,
  gotcha: 90,
  pattern: 90,
  decision: null,
  preference: null,
};

/**
 * Seed 001's persistence by priority caps the half-life: 🟡 working context lasts days (14), 🟢
 * ephemeral context hours (1 day); 🔴 facts keep their type's half-life.
 */
export const PRIORITY_HALF_LIFE_CAP_DAYS: Readonly<Record<Priority, number | null>> = {
  '🔴': null,
  '🟡': 14,
  '🟢': 1,
};

/** The half-life of a distilled memory: its type's, capped by its priority's. */
export function halfLifeDaysOf(type: DistilledMemoryType, priority: Priority): number | null {
  const byType = DISTILLED_HALF_LIFE_DAYS[type];
  const cap = PRIORITY_HALF_LIFE_CAP_DAYS[priority];
  if (cap === null) return byType;
  return byType === null ? cap : Math.min(byType, cap);
}

const BY_KIND: Readonly<Record<NonNullable<DistilledFact['kind']>, DistilledMemoryType>> = {
  rule: 'preference',
  preference: 'preference',
  correction: 'gotcha',
  decision: 'decision',
  'state-change': 'decision',
  idea: 'pattern',
  'error-resolution': 'error_pattern',
  'error-unresolved': 'error_pattern',
  'command-fix': 'gotcha',
  'file-change': 'pattern',
  exploration: 'pattern',
};

// Content rules for facts without a kind (an LLM's), in order; the first match decides.
const CONTENT_RULES: readonly [RegExp, DistilledMemoryType][] = [
  [
    /\b(?:prefers?|preference|likes|dislikes|wants)\b|\b(?:developer|user)(?:'s)? (?:rule|stated|said|asked|corrected)\b|^(?:always|never|don'?t|do not)\b/i,
    'preference',
  ],
  [
    /\b(?:errors?|exceptions?|fail(?:s|ed|ing|ure)?|stack trace|exit code|root cause|fixed by)\b|\b[A-Z]\w*Error\b|\bE(?:NOENT|ACCES|PERM|CONNREFUSED|CONNRESET|ADDRINUSE|TIMEDOUT)\b/i,
    'error_pattern',
  ],
  [
    /\b(?:decided|decision|chose|chosen|going with|instead of|rather than|adopt(?:ed)?|switched to|replac(?:ing|ed|es))\b/i,
    'decision',
  ],
  [
    /\b(?:gotcha|careful|beware|watch out|silent(?:ly)?|pitfall|caveat|workaround|turns out|actually|trap)\b/i,
    'gotcha',
  ],
];

/** A fact's memory type: by its kind when the extractive distiller set one, else by content. */
export function memoryTypeOf(fact: Pick<DistilledFact, 'kind' | 'text'>): DistilledMemoryType {
  if (fact.kind !== null) return BY_KIND[fact.kind];
  for (const [pattern, type] of CONTENT_RULES) if (pattern.test(fact.text)) return type;
  return 'pattern';
}
