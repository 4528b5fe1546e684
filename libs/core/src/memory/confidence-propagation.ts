import type { Memory, RelationType } from '@engram/contracts';
import { idOf } from '../ids/deterministic-id';

/**
 * Confidence propagation along memory relations (SPEC §6 lifecycle, seed 002 §7 "Confidence
 * Propagation"): when a memory's confidence changes (a person confirms it, flags it wrong), the
 * memories its relations name move with it, each by the relation type's coefficient times the
 * relation's own confidence times the change of the memory it is reached from:
 *
 *   Δtarget = PROPAGATION_FACTORS[type] · relation.confidence · Δsource,  clamped to [0, 1]
 *
 * (validates 0.6, required_with 0.3, conflicts_with −0.4, supersedes 0.8, derived_from 0.5: the
 * seed's coefficients; the seed names `computePropagated` without defining it, and moving by a
 * share of the change is what keeps a coefficient below 1 from pulling a memory towards a level
 * it never had). A change below MIN_PROPAGATED_CHANGE is not applied and stops there. Cycle-safe
 * and order-independent: breadth-first from the memory that changed, each memory moves at most
 * once (by its nearest path; ties by relation order), and the one that changed never moves again.
 * Pure: the caller loads the memories the relations reach and writes what this returns.
 */

export const PROPAGATION_FACTORS: Readonly<Record<RelationType, number>> = Object.freeze({
  validates: 0.6,
  required_with: 0.3,
  conflicts_with: -0.4,
  supersedes: 0.8,
  derived_from: 0.5,
});

/** SPEC §6: propagation stops below this change of confidence. */
export const MIN_PROPAGATED_CHANGE = 0.05;

/** Float noise must not decide whether a change of exactly the threshold counts. */
const EPSILON = 1e-9;

export type PropagationMemory = Pick<Memory, 'memoryId' | 'confidence' | 'relations'>;

/** A memory's confidence moved by propagation, and the memory it was reached from. */
export interface PropagatedConfidence {
  memoryId: string;
  before: number;
  after: number;
  from: string;
  relationType: RelationType;
}

/**
 * The confidences that move when `origin`'s changes from `before` to its current confidence.
 * `memoryOf` gives the memories the relations may reach (a memory it lacks is not moved).
 */
export function propagateConfidence(
  origin: PropagationMemory,
  before: number,
  memoryOf: (memoryId: string) => PropagationMemory | undefined,
): PropagatedConfidence[] {
  const moved: PropagatedConfidence[] = [];
  const settled = new Set<string>([origin.memoryId]);
  let frontier: { memory: PropagationMemory; change: number }[] = [
    { memory: origin, change: origin.confidence - before },
  ];
  while (frontier.length > 0) {
    const next: typeof frontier = [];
    for (const { memory, change } of frontier) {
      for (const relation of memory.relations ?? []) {
        const targetId = relation.targetMemoryId;
        if (targetId === null || settled.has(targetId)) continue;
        const target = memoryOf(targetId);
        if (target === undefined) continue;
        const factor = PROPAGATION_FACTORS[relation.relationType] ?? 0;
        const wanted = clampUnit(target.confidence + factor * relation.confidence * change);
        const applied = wanted - target.confidence;
        if (Math.abs(applied) < MIN_PROPAGATED_CHANGE - EPSILON) continue;
        settled.add(targetId);
        moved.push({
          memoryId: targetId,
          before: target.confidence,
          after: wanted,
          from: memory.memoryId,
          relationType: relation.relationType,
        });
        next.push({ memory: { ...target, confidence: wanted }, change: applied });
      }
    }
    frontier = next;
  }
  return moved;
}

/**
 * The next versions of the memories propagation moved: the new confidence, a new event (derived
 * from the change that caused it, so a replay writes the same records) and that event in their
 * provenance.
 */
export function propagatedVersions(
  moved: readonly PropagatedConfidence[],
  memories: ReadonlyMap<string, Memory>,
  cause: Pick<Memory, 'eventId' | 'timestamp'>,
): Memory[] {
  return moved.flatMap((change) => {
    const memory = memories.get(change.memoryId);
    if (memory === undefined) return [];
    return [
      {
        ...memory,
        eventId: idOf('confidence-propagated', memory.eventId, cause.eventId),
        timestamp: Math.max(memory.timestamp, cause.timestamp),
        confidence: change.after,
        sourceEventIds: [...new Set([...(memory.sourceEventIds ?? []), cause.eventId])],
      },
    ];
  });
}

function clampUnit(value: number): number {
  return Math.min(1, Math.max(0, value));
}
