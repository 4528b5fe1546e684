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

/**
 * Whether a memory's confidence moving from `before` to `after` can move any related memory: the
 * first hop changes by at most the largest coefficient times the change, so below the stop
 * nothing moves and the related memories need not even be read. `before` unknown: it may.
 */
export function mayPropagate(before: number | undefined, after: number): boolean {
  if (before === undefined) return true;
  const largest = Math.max(...Object.values(PROPAGATION_FACTORS).map(Math.abs));
  return Math.abs(after - before) * largest >= MIN_PROPAGATED_CHANGE;
}

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

/**
 * How far a confidence change is followed: a change shrinks at every hop (coefficients ≤ 0.8)
 * and stops below 0.05, so a change of 1 dies out within 14 hops.
 */
export const PROPAGATION_HOPS = 14;
/** At most this many memories are loaded for one write (a bounded write). */
export const PROPAGATION_MEMORIES = 200;

/**
 * The memories the relations of `origins` reach, hop by hop (up to PROPAGATION_HOPS hops and
 * PROPAGATION_MEMORIES memories), with `origins` among them: what `propagateConfidence` may move.
 * `load` gives the memories of the caller's project among the ids (a missing one is not moved).
 */
export async function loadRelatedMemories(
  origins: readonly Memory[],
  load: (memoryIds: string[]) => Promise<Memory[]>,
): Promise<Map<string, Memory>> {
  const loaded = new Map<string, Memory>(origins.map((m) => [m.memoryId, m]));
  let frontier: readonly Memory[] = origins;
  for (let hop = 0; hop < PROPAGATION_HOPS && frontier.length > 0; hop += 1) {
    const wanted = [
      ...new Set(
        frontier.flatMap((m) => (m.relations ?? []).flatMap((r) => r.targetMemoryId ?? [])),
      ),
    ]
      .filter((id) => !loaded.has(id))
      .slice(0, Math.max(0, PROPAGATION_MEMORIES - loaded.size));
    if (wanted.length === 0) break;
    frontier = (await load(wanted)).filter((m) => !loaded.has(m.memoryId));
    for (const memory of frontier) loaded.set(memory.memoryId, memory);
  }
  return loaded;
}

/** A memory's new version and the confidence its previous version had. */
export interface ConfidenceChange {
  memory: Memory;
  before: number;
}

/**
 * The versions propagation moves when several memories change in one write (the observer's
 * re-promotions of a transaction), latest per memory, in the order they were last moved. The
 * changes apply in the order given, each from the versions the ones before it wrote, so the
 * same changes over the same memories always give the same versions. `memories`: the current
 * versions the relations may reach (`loadRelatedMemories`); the changed memories' new versions
 * take their place.
 */
export function propagateConfidenceChanges(
  changes: readonly ConfidenceChange[],
  memories: ReadonlyMap<string, Memory>,
): Memory[] {
  const latest = new Map(memories);
  for (const { memory } of changes) latest.set(memory.memoryId, memory);
  const moved = new Map<string, Memory>();
  for (const { memory, before } of changes) {
    if (memory.confidence === before) continue;
    const changed = propagateConfidence(memory, before, (id) => latest.get(id));
    for (const version of propagatedVersions(changed, latest, memory)) {
      latest.set(version.memoryId, version);
      moved.delete(version.memoryId);
      moved.set(version.memoryId, version);
    }
  }
  return [...moved.values()];
}
