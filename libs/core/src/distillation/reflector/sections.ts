import type { DistilledFact } from '../types';
import type { ReflectionSection } from '../proposals/types';

const HARD_RULE =
  /^(?:always|never|don'?t|do not|must)\b|\b(?:always|never|must not|mustn'?t|must)\b|\b(?:developer|user) rule\b/i;
const USER = /\b(?:user|developer)(?:'s)? (?:prefers?|likes?|wants?|preference)\b|\bprefers?\b/i;
const ARCHITECTURE =
  /\b(?:runs? (?:on|in|from)|lives? in|located|port \d+|service|database|schema|topic|index|config(?:uration)?|deploy(?:ed|ment)?|architecture|module|package|director(?:y|ies)|folder|version|migrat(?:ed|ion)|replac(?:ed|ing)|instead of)\b|(?:^|\s)(?:[\w@.-]+\/)+[\w@.-]+/i;

/**
 * The MEMORY.md section a fact belongs to (seed 001's reflector rule 6): rules the user stated →
 * Hard Rules; the user's preferences → User; infrastructure, paths, services, decisions about
 * them and changes of state ("we moved to X") → System Architecture; what works and what does not (fixes, commands, corrections) →
 * Patterns. By the extractive kind when there is one, else by content.
 */
export function sectionOf(fact: Pick<DistilledFact, 'kind' | 'text'>): ReflectionSection {
  switch (fact.kind) {
    case 'rule':
      return 'Hard Rules';
    case 'preference':
      return 'User';
    case 'decision':
    case 'state-change':
      return 'System Architecture';
    case 'correction':
      return ARCHITECTURE.test(fact.text) ? 'System Architecture' : 'Patterns';
    case 'error-resolution':
    case 'error-unresolved':
    case 'command-fix':
    case 'file-change':
    case 'exploration':
    case 'idea':
      return 'Patterns';
    case null:
      break;
  }
  if (HARD_RULE.test(fact.text)) return 'Hard Rules';
  if (USER.test(fact.text)) return 'User';
  if (ARCHITECTURE.test(fact.text)) return 'System Architecture';
  return 'Patterns';
}

/** A section named by a model, tolerant of spelling ("hard rules", "Joel", "Architecture"). */
export function sectionNamed(name: string): ReflectionSection | null {
  const key = name.toLowerCase().replace(/[^a-z]/g, '');
  if (/^(?:user|developer|joel|me|preferences?)$/.test(key)) return 'User';
  if (key.includes('rule')) return 'Hard Rules';
  if (key.includes('architecture') || key === 'system' || key === 'infrastructure') {
    return 'System Architecture';
  }
  if (key.includes('pattern') || key === 'lessons' || key === 'gotchas') return 'Patterns';
  return null;
}
