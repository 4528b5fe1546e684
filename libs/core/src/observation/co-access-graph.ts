import { pairKeyOf } from './co-access-detection';
import type { CoAccessSignal, FileAccessSignal } from './signals';

/**
 * The co-access graph of one project as a fold over signals (the service mirrors it in Neo4j as
 * `CO_ACCESSED` edges). Plain JSON. Each signal must be applied once: the detector drops
 * redelivered calls, and signal ids are deterministic for the service's own idempotency.
 */
export interface CoAccessAggregate {
  /** Sessions that touched each file (any access). */
  files: Record<string, { sessionCount: number }>;
  /** Keyed by the sorted pair (`pairKeyOf`). */
  pairs: Record<string, CoAccessPairStat>;
  /** Pair keys of each file, for neighbour queries without a scan. */
  adjacency: Record<string, string[]>;
}

export interface CoAccessPairStat {
  /** fileA < fileB. */
  fileA: string;
  fileB: string;
  /** Sessions in which both were co-accessed. */
  sessionCount: number;
  rawCount: number;
  timeDeltaSumMs: number;
  /** Observations with a measured time delta (co-commits have none). */
  timedCount: number;
  aThenB: number;
  bThenA: number;
  sameStep: number;
  lastObservedAt: number;
}

/** SPEC §5 `CO_ACCESSED {weight, rawCount, avgTimeDeltaMs, directional, lastObservedAt}`. */
export interface CoAccessedEdge {
  fileA: string;
  fileB: string;
  /** Sessions with both / sessions with either. */
  weight: number;
  rawCount: number;
  sessionCount: number;
  avgTimeDeltaMs: number;
  directional: boolean;
  direction: 'a_to_b' | 'b_to_a' | 'none';
  lastObservedAt: number;
}

export interface CoAccessNeighbour {
  file: string;
  weight: number;
  rawCount: number;
  sessionCount: number;
  avgTimeDeltaMs: number;
  /** outgoing: the queried file usually comes first; incoming: the neighbour does. */
  direction: 'outgoing' | 'incoming' | 'both';
}

export interface DirectionRule {
  directionalShare: number;
  directionalMinSamples: number;
}

export function emptyCoAccessAggregate(): CoAccessAggregate {
  return { files: {}, pairs: {}, adjacency: {} };
}

export function applyFileAccess(aggregate: CoAccessAggregate, signal: FileAccessSignal): void {
  if (!signal.firstInSession) return;
  const file = (aggregate.files[signal.filePath] ??= { sessionCount: 0 });
  file.sessionCount += 1;
}

export function applyCoAccess(aggregate: CoAccessAggregate, signal: CoAccessSignal): void {
  const pair = pairOf(aggregate, signal.fileA, signal.fileB);
  pair.rawCount += 1;
  pair.timeDeltaSumMs += signal.timeDeltaMs;
  pair.timedCount += 1;
  if (signal.direction === 'same_step') pair.sameStep += 1;
  else if (signal.fileA === pair.fileA) pair.aThenB += 1;
  else pair.bThenA += 1;
  pair.lastObservedAt = Math.max(pair.lastObservedAt, signal.at);
  if (signal.firstInSession) pair.sessionCount += 1;
}

/**
 * Cold start (`engram bootstrap`): one commit counts as one session in which its files were all
 * co-accessed, in no order. Commits of more than `maxFiles` files (mass renames, formatting) say
 * nothing about coupling and would add a quadratic number of pairs, so they are skipped.
 */
export function applyCoCommit(
  aggregate: CoAccessAggregate,
  files: readonly string[],
  at: number,
  maxFiles = 50,
): boolean {
  const unique = [...new Set(files)].sort();
  if (unique.length < 2 || unique.length > maxFiles) return false;
  for (const file of unique) (aggregate.files[file] ??= { sessionCount: 0 }).sessionCount += 1;
  for (let i = 0; i < unique.length; i += 1) {
    for (let j = i + 1; j < unique.length; j += 1) {
      const pair = pairOf(aggregate, unique[i], unique[j]);
      pair.rawCount += 1;
      pair.sameStep += 1;
      pair.sessionCount += 1;
      pair.lastObservedAt = Math.max(pair.lastObservedAt, at);
    }
  }
  return true;
}

export function coAccessEdge(
  aggregate: CoAccessAggregate,
  a: string,
  b: string,
  rule: DirectionRule,
): CoAccessedEdge | null {
  const pair = aggregate.pairs[pairKeyOf(a, b)];
  return pair === undefined ? null : edgeOf(aggregate, pair, rule);
}

/** The file's neighbours: highest weight first, then raw count, then path. */
export function topNeighbours(
  aggregate: CoAccessAggregate,
  file: string,
  k: number,
  rule: DirectionRule,
): CoAccessNeighbour[] {
  const neighbours = (aggregate.adjacency[file] ?? []).map((key) => {
    const edge = edgeOf(aggregate, aggregate.pairs[key], rule);
    const isA = edge.fileA === file;
    const outgoing = isA ? 'a_to_b' : 'b_to_a';
    return {
      file: isA ? edge.fileB : edge.fileA,
      weight: edge.weight,
      rawCount: edge.rawCount,
      sessionCount: edge.sessionCount,
      avgTimeDeltaMs: edge.avgTimeDeltaMs,
      direction:
        edge.direction === 'none' ? 'both' : edge.direction === outgoing ? 'outgoing' : 'incoming',
    } satisfies CoAccessNeighbour;
  });
  neighbours.sort(
    (x, y) => y.weight - x.weight || y.rawCount - x.rawCount || (x.file < y.file ? -1 : 1),
  );
  return neighbours.slice(0, Math.max(0, k));
}

function edgeOf(
  aggregate: CoAccessAggregate,
  pair: CoAccessPairStat,
  rule: DirectionRule,
): CoAccessedEdge {
  const sessionsA = aggregate.files[pair.fileA]?.sessionCount ?? 0;
  const sessionsB = aggregate.files[pair.fileB]?.sessionCount ?? 0;
  // Either count can lag "both" only if file_access signals were not applied; never exceed 1.
  const either = Math.max(pair.sessionCount, sessionsA + sessionsB - pair.sessionCount);
  const ordered = pair.aThenB + pair.bThenA;
  const majority = Math.max(pair.aThenB, pair.bThenA);
  const directional =
    ordered >= rule.directionalMinSamples && majority / ordered >= rule.directionalShare;
  return {
    fileA: pair.fileA,
    fileB: pair.fileB,
    weight: either === 0 ? 0 : pair.sessionCount / either,
    rawCount: pair.rawCount,
    sessionCount: pair.sessionCount,
    avgTimeDeltaMs: pair.timedCount === 0 ? 0 : pair.timeDeltaSumMs / pair.timedCount,
    directional,
    direction: !directional ? 'none' : pair.aThenB >= pair.bThenA ? 'a_to_b' : 'b_to_a',
    lastObservedAt: pair.lastObservedAt,
  };
}

function pairOf(aggregate: CoAccessAggregate, x: string, y: string): CoAccessPairStat {
  const key = pairKeyOf(x, y);
  let pair = aggregate.pairs[key];
  if (pair === undefined) {
    const [fileA, fileB] = x < y ? [x, y] : [y, x];
    pair = {
      fileA,
      fileB,
      sessionCount: 0,
      rawCount: 0,
      timeDeltaSumMs: 0,
      timedCount: 0,
      aThenB: 0,
      bThenA: 0,
      sameStep: 0,
      lastObservedAt: 0,
    };
    aggregate.pairs[key] = pair;
    (aggregate.adjacency[fileA] ??= []).push(key);
    (aggregate.adjacency[fileB] ??= []).push(key);
  }
  return pair;
}
