import type { Memory, MemoryScope, MemoryType } from '@engram/contracts';
import { idOf } from '../ids/deterministic-id';
import { effectiveHalfLifeDays } from './half-life';
import { PRUNED_TAG } from './memory-history';
import { isSuperseded } from './superseded';

/**
 * Pruning (SPEC §6 lifecycle, seed 002 §13, issue #20): which memories of a project go, and why.
 * Never a silent deletion: the writer gives each selected memory a final version that says why
 * (`prunedVersion`: a `pruned:<reason>` tag, stale from then) and then its tombstone, the one
 * Feedback DELETE writes, so `engram memory history` shows the reason. Pure and deterministic:
 * the same memories, criteria and clock select the same memories in the same order.
 *
 * What a person confirmed (`userVerified`) is never pruned (a person deletes it through
 * Feedback), nor a memory created or accessed within `minIdleDays`.
 *
 * Without criteria, seed 002 §13's rules: a session-scoped memory idle for `sessionExpiryDays`;
 * any other whose confidence, decayed by its half-life (its type's, `half-life.ts`), is below
 * `decayedBelow` after `decayedIdleDays` idle (global decisions, preferences and requirements
 * have no half-life: they never decay, so they stay). With criteria, every one given must hold.
 */

export interface PruneCriteria {
  /** Only memories of these scopes (empty: any). */
  scopes: readonly MemoryScope[];
  /** Only memories of these types (empty: any). */
  types: readonly MemoryType[];
  /** Idle (neither created nor accessed) for at least this many days. */
  olderThanDays: number | null;
  /** Confidence, decayed by the memory's half-life, below this. */
  belowConfidence: number | null;
  /** Stale (its files gone, or outdated) or superseded by a newer memory. */
  stale: boolean;
}

export interface PruneRule {
  /** Nothing created or accessed within this many days is pruned, whatever the criteria. */
  minIdleDays: number;
  /** Default rule: session-scoped memories idle this long expire. */
  sessionExpiryDays: number;
  /** Default rule: a decayed confidence below this … */
  decayedBelow: number;
  /** … with the memory idle at least this long. */
  decayedIdleDays: number;
}

export const PRUNE_RULE: PruneRule = Object.freeze({
  minIdleDays: 1,
  sessionExpiryDays: 7,
  decayedBelow: 0.2,
  decayedIdleDays: 60,
});

export const NO_PRUNE_CRITERIA: PruneCriteria = Object.freeze({
  scopes: [],
  types: [],
  olderThanDays: null,
  belowConfidence: null,
  stale: false,
});

export type PruneVerdict =
  | { prune: true; reason: string }
  | {
      prune: false;
      reason: 'scope' | 'type' | 'user-verified' | 'pruned' | 'recent' | 'criteria';
    };

export interface PruneCandidate {
  memory: Memory;
  /** What the `pruned:` tag says: the criteria it met, joined by `+`. */
  reason: string;
}

const DAY_MS = 86_400_000;

/** When the memory was last created or accessed (what its idleness counts from). */
export function lastActiveAt(memory: Pick<Memory, 'createdAt' | 'lastAccessedAt'>): number {
  return Math.max(memory.createdAt ?? 0, memory.lastAccessedAt ?? 0);
}

/**
 * The confidence after decaying by the memory's half-life over its idle time: halved every
 * half-life. A memory without a half-life keeps its confidence.
 */
export function decayedConfidence(
  memory: Pick<
    Memory,
    'confidence' | 'memoryType' | 'decayHalfLifeDays' | 'createdAt' | 'lastAccessedAt'
  >,
  now: number,
): number {
  const halfLife = effectiveHalfLifeDays(memory);
  if (halfLife === null) return memory.confidence;
  const idleDays = Math.max(0, now - lastActiveAt(memory)) / DAY_MS;
  return memory.confidence * Math.pow(0.5, idleDays / halfLife);
}

/** Whether the memory goes under the criteria, and why (or why not). */
export function pruneVerdict(
  memory: Memory,
  criteria: PruneCriteria,
  rule: PruneRule,
  now: number,
): PruneVerdict {
  if (criteria.scopes.length > 0 && !criteria.scopes.includes(memory.scope)) {
    return { prune: false, reason: 'scope' };
  }
  if (criteria.types.length > 0 && !criteria.types.includes(memory.memoryType)) {
    return { prune: false, reason: 'type' };
  }
  if (memory.userVerified) return { prune: false, reason: 'user-verified' };
  if ((memory.tags ?? []).some((tag) => tag.startsWith(PRUNED_TAG))) {
    return { prune: false, reason: 'pruned' };
  }
  const idleDays = (now - lastActiveAt(memory)) / DAY_MS;
  if (idleDays < rule.minIdleDays) return { prune: false, reason: 'recent' };
  const reasons = hasCriteria(criteria)
    ? explicitReasons(memory, criteria, idleDays, now)
    : defaultReasons(memory, rule, idleDays, now);
  return reasons === null ? { prune: false, reason: 'criteria' } : { prune: true, reason: reasons };
}

/** The memories that go, ordered by id (deterministic whatever order they came in). */
export function selectForPruning(
  memories: readonly Memory[],
  criteria: PruneCriteria,
  rule: PruneRule,
  now: number,
): PruneCandidate[] {
  const selected: PruneCandidate[] = [];
  for (const memory of memories) {
    const verdict = pruneVerdict(memory, criteria, rule, now);
    if (verdict.prune) selected.push({ memory, reason: verdict.reason });
  }
  return selected.sort((a, b) => a.memory.memoryId.localeCompare(b.memory.memoryId));
}

/**
 * No memory created after this time can be selected under the criteria (it cannot have been idle
 * long enough): a store need be asked only for older ones.
 */
export function pruneCreatedBefore(criteria: PruneCriteria, rule: PruneRule, now: number): number {
  const idleDays = hasCriteria(criteria)
    ? Math.max(rule.minIdleDays, criteria.olderThanDays ?? 0)
    : Math.max(rule.minIdleDays, Math.min(rule.sessionExpiryDays, rule.decayedIdleDays));
  return now - idleDays * DAY_MS;
}

/**
 * The memory's final version before its tombstone: tagged `pruned:<reason>`, stale from `now`
 * (an earlier staleAt is kept), so the history says why it went. Its eventId derives from the
 * version it replaces and the reason (a retried prune writes the same one).
 */
export function prunedVersion(memory: Memory, reason: string, now: number): Memory {
  return {
    ...memory,
    eventId: idOf('pruned', memory.memoryId, memory.eventId, reason),
    timestamp: now,
    tags: [...new Set([...(memory.tags ?? []), PRUNED_TAG + reason])],
    staleAt: memory.staleAt ?? now,
  };
}

function hasCriteria(criteria: PruneCriteria): boolean {
  return criteria.olderThanDays !== null || criteria.belowConfidence !== null || criteria.stale;
}

function explicitReasons(
  memory: Memory,
  criteria: PruneCriteria,
  idleDays: number,
  now: number,
): string | null {
  const reasons: string[] = [];
  if (criteria.stale) {
    if (isSuperseded(memory)) reasons.push('superseded');
    else if (memory.staleAt !== null && memory.staleAt !== undefined) reasons.push('stale');
    else return null;
  }
  if (criteria.olderThanDays !== null) {
    if (idleDays < criteria.olderThanDays) return null;
    reasons.push(`older-than-${criteria.olderThanDays}d`);
  }
  if (criteria.belowConfidence !== null) {
    if (!(decayedConfidence(memory, now) < criteria.belowConfidence)) return null;
    reasons.push(`below-confidence-${criteria.belowConfidence}`);
  }
  return reasons.join('+');
}

function defaultReasons(
  memory: Memory,
  rule: PruneRule,
  idleDays: number,
  now: number,
): string | null {
  if (memory.scope === 'session' && idleDays >= rule.sessionExpiryDays) {
    return `session-expired-${rule.sessionExpiryDays}d`;
  }
  if (idleDays >= rule.decayedIdleDays && decayedConfidence(memory, now) < rule.decayedBelow) {
    return `decayed-below-${rule.decayedBelow}`;
  }
  return null;
}
