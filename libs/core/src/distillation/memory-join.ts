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
    eventId: '',
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
  joined.eventId = joinedEventId(joined);
  return joined;
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

/**
 * Every field of a memory but its event id, in a fixed order: the joined state the event id is
 * derived from (`satisfies` makes a field added to the contract a compile error here).
 */
const STATE_FIELDS = Object.keys({
  tenantId: true,
  projectId: true,
  sessionId: true,
  agentId: true,
  userId: true,
  timestamp: true,
  schemaVersion: true,
  memoryId: true,
  memoryType: true,
  content: true,
  confidence: true,
  tags: true,
  relatedFiles: true,
  relatedModules: true,
  createdAt: true,
  lastAccessedAt: true,
  accessCount: true,
  workUnitRef: true,
  scope: true,
  source: true,
  episodeId: true,
  commitSha: true,
  provenanceSessionIds: true,
  sourceEventIds: true,
  targetNodeId: true,
  relations: true,
  decayHalfLifeDays: true,
  needsReview: true,
  userVerified: true,
  citationText: true,
  staleAt: true,
  embedding: true,
  embeddingModel: true,
  workState: true,
  e2eObservation: true,
  deadEnd: true,
  workUnitOutcome: true,
  workflowRecipe: true,
  contextCost: true,
  prefetchPattern: true,
  taskCalibration: true,
} satisfies Record<Exclude<keyof Memory, 'eventId'>, true>) as Exclude<keyof Memory, 'eventId'>[];

function joinedEventId(memory: Memory): string {
  let state = '';
  for (const field of STATE_FIELDS) {
    const value = memory[field];
    if (value === null || typeof value !== 'object') state += JSON.stringify(value);
    else if (isStringList(value)) state += listDigest(value);
    else state += stableJson(value);
    state += '\u0001';
  }
  return idOf('memory-join', memory.memoryId, state);
}

function isStringList(value: object): value is string[] {
  return Array.isArray(value) && (value.length === 0 || typeof value[0] === 'string');
}

/**
 * A list's digest, kept per list object: a memory's provenance lists (up to 100 ids each) are
 * mostly the same objects from one join to the next (union returns a list unchanged as it is),
 * so deriving each joined memory's event id does not re-read them every time.
 */
const LIST_DIGESTS = new WeakMap<readonly string[], string>();

function listDigest(list: readonly string[]): string {
  let digest = LIST_DIGESTS.get(list);
  if (digest === undefined) {
    digest = list.length === 0 ? '[]' : idOf('list', JSON.stringify(list));
    LIST_DIGESTS.set(list, digest);
  }
  return digest;
}

/**
 * The sorted union of two id lists, at most `bound` long (the smallest). A joined memory's lists
 * are sorted already, and a new version mostly adds nothing to them: then the list itself is
 * returned (no copy), else the two are merged in one pass.
 */
function union(a: readonly string[], b: readonly string[], bound = Infinity): string[] {
  const [x, y] = [sortedOf(a), sortedOf(b)];
  if (x.length <= bound && containsAll(x, y)) return x as string[];
  if (y.length <= bound && containsAll(y, x)) return y as string[];
  const out: string[] = [];
  let [i, j] = [0, 0];
  while (out.length < bound && (i < x.length || j < y.length)) {
    const next = j >= y.length || (i < x.length && x[i] <= y[j]) ? x[i++] : y[j++];
    if (out.length === 0 || out[out.length - 1] !== next) out.push(next);
  }
  return out;
}

/** The list sorted without duplicates (itself when it is already). */
function sortedOf(list: readonly string[]): readonly string[] {
  for (let i = 1; i < list.length; i++) {
    if (list[i - 1] >= list[i]) return [...new Set(list)].sort();
  }
  return list;
}

/** Whether every item is in the sorted list (binary search: no allocation). */
function containsAll(sorted: readonly string[], items: readonly string[]): boolean {
  return items.every((item) => {
    let [low, high] = [0, sorted.length - 1];
    while (low <= high) {
      const middle = (low + high) >> 1;
      if (sorted[middle] === item) return true;
      if (sorted[middle] < item) low = middle + 1;
      else high = middle - 1;
    }
    return false;
  });
}

function relationUnion(
  a: readonly MemoryRelation[],
  b: readonly MemoryRelation[],
): Memory['relations'] {
  if (a.length === 0 && b.length === 0) return [];
  const byKey = new Map<string, MemoryRelation>();
  for (const relation of [...a, ...b]) byKey.set(stableJson(relation), relation);
  return [...byKey].sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)).map(([, r]) => r);
}

/**
 * JSON with object keys sorted: equal values, equal strings, whatever the keys' order. (Written
 * out rather than a JSON.stringify replacer: it runs for every version joined, and a replacer
 * is called for every element of the provenance lists.)
 */
function stableJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) {
    return value.every((item) => item === null || typeof item !== 'object')
      ? JSON.stringify(value)
      : `[${value.map(stableJson).join(',')}]`;
  }
  const record = value as Record<string, unknown>;
  const fields = Object.keys(record)
    .filter((key) => record[key] !== undefined)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${stableJson(record[key])}`);
  return `{${fields.join(',')}}`;
}
