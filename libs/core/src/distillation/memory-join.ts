import type { Memory, MemoryRelation } from '@engram/contracts';
import { idOf } from '../ids/deterministic-id';

/**
 * Why versions of one memory are joined (issue #19). A fact distilled in several sessions has one
 * memory id (tenant, project, type, normalised content) but one version per distillation, each
 * with its own provenance. The compacted memory topic keeps one record per id, so writing the
 * versions as they come keeps whichever the distiller finished last — a matter of timing, and it
 * forgets every other session. Instead the distiller keeps, per memory id, the join of every
 * version it has seen and writes that. The join is commutative, associative and idempotent, so
 * the result is the same for any delivery order, any replay and any redelivery:
 *
 * - provenance is the union: sessions, source events, files, modules, tags, relations (sorted;
 *   provenance ids bounded to the MAX_PROVENANCE_IDS smallest, a bound that commutes with union);
 * - createdAt is the earliest, timestamp and lastAccessedAt the latest, accessCount the largest
 *   (a sum would count a redelivered version twice);
 * - confidence is the largest, and the half-life is the one that came with it (the more durable
 *   fact decides how long the memory lasts, as within one distillation);
 * - needsReview only if every version needs review: one version that did not (an extractive 🔴
 *   fact) is evidence enough; userVerified if any version was verified;
 * - content and every other scalar come from the canonically first version: earliest createdAt,
 *   then session id, then a version that names its episode, then the scalars themselves. (Not
 *   the version's event id: a joined memory has a new one, and the order must be readable from a
 *   joined memory for the join to be associative — the scalars it carries are the first's.)
 * - the event id is derived from the joined state, so equal states have equal ids and a changed
 *   state a new one (a consumer that dedupes by event id never drops a real change).
 */

/** At most this many source event and provenance session ids (the promotions' bound). */
export const MAX_PROVENANCE_IDS = 100;

/** The join of two versions of one memory (throws on different memory ids: a caller's bug). */
export function joinMemoryVersions(a: Memory, b: Memory): Memory {
  if (a.memoryId !== b.memoryId) {
    throw new Error(`cannot join memory ${a.memoryId} with ${b.memoryId}`);
  }
  const first = canonicalOrder(a, b) <= 0 ? a : b;
  const durable = durabilityOrder(a, b) >= 0 ? a : b;
  const joined: Memory = {
    ...first,
    tags: union(a.tags, b.tags),
    relatedFiles: union(a.relatedFiles, b.relatedFiles),
    relatedModules: union(a.relatedModules, b.relatedModules),
    provenanceSessionIds: union(a.provenanceSessionIds, b.provenanceSessionIds, MAX_PROVENANCE_IDS),
    sourceEventIds: union(a.sourceEventIds, b.sourceEventIds, MAX_PROVENANCE_IDS),
    relations: relationUnion(a.relations, b.relations),
    createdAt: Math.min(a.createdAt, b.createdAt),
    timestamp: Math.max(a.timestamp, b.timestamp),
    lastAccessedAt: Math.max(a.lastAccessedAt, b.lastAccessedAt),
    accessCount: Math.max(a.accessCount, b.accessCount),
    confidence: durable.confidence,
    decayHalfLifeDays: durable.decayHalfLifeDays,
    needsReview: a.needsReview && b.needsReview,
    userVerified: a.userVerified || b.userVerified,
  };
  return { ...joined, eventId: joinedEventId(joined) };
}

/** A single version in the form a join returns (sorted, bounded, derived event id). */
export function normaliseMemoryVersion(memory: Memory): Memory {
  return joinMemoryVersions(memory, memory);
}

/** The join of any number of versions of one memory (null for none). */
export function joinAllMemoryVersions(versions: readonly Memory[]): Memory | null {
  if (versions.length === 0) return null;
  return versions.slice(1).reduce(joinMemoryVersions, normaliseMemoryVersion(versions[0]));
}

/** Negative when `a` is canonically before `b`. */
function canonicalOrder(a: Memory, b: Memory): number {
  if (a.createdAt !== b.createdAt) return a.createdAt - b.createdAt;
  if (a.sessionId !== b.sessionId) return a.sessionId < b.sessionId ? -1 : 1;
  if ((a.episodeId === null) !== (b.episodeId === null)) return a.episodeId === null ? 1 : -1;
  const [sa, sb] = [scalarsOf(a), scalarsOf(b)];
  return sa === sb ? 0 : sa < sb ? -1 : 1;
}

/** Positive when `a` is the more durable: higher confidence, then the longer half-life. */
function durabilityOrder(a: Memory, b: Memory): number {
  if (a.confidence !== b.confidence) return a.confidence - b.confidence;
  return (a.decayHalfLifeDays ?? -1) - (b.decayHalfLifeDays ?? -1);
}

/** Every field the join takes from the canonically first version, as one comparable string. */
function scalarsOf(memory: Memory): string {
  const {
    tags: _tags,
    relatedFiles: _files,
    relatedModules: _modules,
    provenanceSessionIds: _sessions,
    sourceEventIds: _events,
    relations: _relations,
    createdAt: _created,
    timestamp: _timestamp,
    lastAccessedAt: _accessed,
    accessCount: _count,
    confidence: _confidence,
    decayHalfLifeDays: _halfLife,
    needsReview: _review,
    userVerified: _verified,
    eventId: _eventId,
    ...scalars
  } = memory;
  return stableJson(scalars);
}

function joinedEventId(memory: Memory): string {
  const { eventId: _eventId, ...state } = memory;
  return idOf('memory-join', memory.memoryId, stableJson(state));
}

function union(a: readonly string[], b: readonly string[], bound = Infinity): string[] {
  const all = [...new Set([...a, ...b])].sort();
  return all.length > bound ? all.slice(0, bound) : all;
}

function relationUnion(
  a: readonly MemoryRelation[],
  b: readonly MemoryRelation[],
): Memory['relations'] {
  const byKey = new Map<string, MemoryRelation>();
  for (const relation of [...a, ...b]) byKey.set(stableJson(relation), relation);
  return [...byKey].sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)).map(([, r]) => r);
}

/** JSON with object keys sorted: equal values, equal strings, whatever the keys' order. */
function stableJson(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) =>
    inner !== null && typeof inner === 'object' && !Array.isArray(inner)
      ? Object.fromEntries(
          Object.entries(inner as Record<string, unknown>).sort(([x], [y]) =>
            x < y ? -1 : x > y ? 1 : 0,
          ),
        )
      : inner,
  );
}
