import type { GraphScope, GraphSessionPairRow } from './observer-graph';

/** The counters a session's fact of a pair adds to the pair's project-wide edge. */
export const PAIR_COUNTERS = [
  'rawCount',
  'timeDeltaSumMs',
  'timedCount',
  'aThenB',
  'bThenA',
  'sameStep',
] as const;

export type PairCounter = (typeof PAIR_COUNTERS)[number];

/**
 * One session's stored facts of every pair it co-accessed, by `pairKey`: the counters in
 * PAIR_COUNTERS order, then lastObservedAt. Small and flat, so a graph store can keep it as one
 * property of the session (JSON) instead of a relationship per session between two dense files.
 */
export type StoredPairFacts = Record<string, number[]>;

/** How much one batch moved a pair's project-wide totals (summed over the batch's sessions). */
export interface PairEdgeDelta extends GraphScope {
  fileA: string;
  fileB: string;
  /** Sessions whose first fact of the pair this is. */
  newSessions: number;
  counters: Record<PairCounter, number>;
  lastObservedAt: number;
}

export function pairKey(fileA: string, fileB: string): string {
  return `${fileA}\u0000${fileB}`;
}

/**
 * Applies a batch's per-session pair rows (absolute values so far) to the sessions' stored
 * facts, forward-only (a counter never goes down, so a replayed or stale row moves nothing), and
 * returns the new facts per session and each pair's delta — exactly what the stored facts moved,
 * summed per pair. Writing the same rows again gives no delta: the project totals, moved by the
 * deltas, survive any replay. Deterministic: keys sorted, deltas in pair order.
 */
export function applyPairFacts(
  storedBySession: ReadonlyMap<string, StoredPairFacts>,
  rows: readonly GraphSessionPairRow[],
): { facts: Map<string, StoredPairFacts>; deltas: PairEdgeDelta[] } {
  const facts = new Map<string, StoredPairFacts>();
  const deltas = new Map<string, PairEdgeDelta>();
  for (const row of rows) {
    let session = facts.get(row.sessionId);
    if (!session) {
      session = { ...(storedBySession.get(row.sessionId) ?? {}) };
      facts.set(row.sessionId, session);
    }
    const key = pairKey(row.fileA, row.fileB);
    const before = session[key];
    const after = PAIR_COUNTERS.map((c, i) => Math.max(before?.[i] ?? 0, row[c]));
    after.push(Math.max(before?.[PAIR_COUNTERS.length] ?? 0, row.lastObservedAt));
    session[key] = after;
    const delta = deltaOf(deltas, row);
    if (before === undefined) delta.newSessions += 1;
    PAIR_COUNTERS.forEach((c, i) => (delta.counters[c] += after[i] - (before?.[i] ?? 0)));
    delta.lastObservedAt = Math.max(delta.lastObservedAt, after[PAIR_COUNTERS.length]);
  }
  const moved = [...deltas.entries()]
    .filter(([, d]) => d.newSessions > 0 || PAIR_COUNTERS.some((c) => d.counters[c] !== 0))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, d]) => d);
  return { facts: new Map([...facts].map(([id, f]) => [id, sortedFacts(f)])), deltas: moved };
}

function deltaOf(deltas: Map<string, PairEdgeDelta>, row: GraphSessionPairRow): PairEdgeDelta {
  const key = `${row.tenantId}\u0000${row.projectId}\u0000${pairKey(row.fileA, row.fileB)}`;
  let delta = deltas.get(key);
  if (!delta) {
    const counters = Object.fromEntries(
      PAIR_COUNTERS.map((c) => [c, 0]),
    ) as PairEdgeDelta['counters'];
    delta = {
      tenantId: row.tenantId,
      projectId: row.projectId,
      fileA: row.fileA,
      fileB: row.fileB,
      newSessions: 0,
      counters,
      lastObservedAt: 0,
    };
    deltas.set(key, delta);
  }
  return delta;
}

/** Keys in order, so the same facts always serialise to the same string. */
function sortedFacts(facts: StoredPairFacts): StoredPairFacts {
  return Object.fromEntries(Object.entries(facts).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** The stored form of a session's facts (one string property). */
export function encodePairFacts(facts: StoredPairFacts): string {
  return JSON.stringify(facts);
}

/** Reads a stored property back; a missing one is no facts yet. */
export function decodePairFacts(stored: string | null | undefined): StoredPairFacts {
  if (!stored) return {};
  const parsed: unknown = JSON.parse(stored);
  return parsed !== null && typeof parsed === 'object' ? (parsed as StoredPairFacts) : {};
}
