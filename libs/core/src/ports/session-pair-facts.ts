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
 * deltas, survive any replay. Deterministic: deltas in pair order. The stored facts given are not
 * changed.
 */
export function applyPairFacts(
  storedBySession: ReadonlyMap<string, StoredPairFacts>,
  rows: readonly GraphSessionPairRow[],
): { facts: Map<string, StoredPairFacts>; deltas: PairEdgeDelta[] } {
  const sessions = new Map<string, CompactFacts>();
  const deltas = new Map<string, PairEdgeDelta>();
  for (const row of rows) {
    let session = sessions.get(row.sessionId);
    if (!session) {
      session = CompactFacts.fromRecord(storedBySession.get(row.sessionId) ?? {});
      sessions.set(row.sessionId, session);
    }
    session.apply(row, deltas);
  }
  const facts = new Map([...sessions].map(([id, session]) => [id, session.toRecord()]));
  return { facts, deltas: movedDeltas(deltas) };
}

/**
 * applyPairFacts on the stored form itself (`encodePairFacts`), as a graph store reads and writes
 * it: returns the new stored form of each session whose facts moved (the others are unchanged),
 * and the deltas. The same strings and deltas as decoding, applyPairFacts and encoding, without
 * the intermediate records (a store does this for every session of every batch).
 */
export function applyStoredPairFacts(
  storedBySession: ReadonlyMap<string, string | null | undefined>,
  rows: readonly GraphSessionPairRow[],
): { facts: Map<string, string>; deltas: PairEdgeDelta[] } {
  const sessions = new Map<string, CompactFacts>();
  const deltas = new Map<string, PairEdgeDelta>();
  for (const row of rows) {
    let session = sessions.get(row.sessionId);
    if (!session) {
      session = CompactFacts.parse(storedBySession.get(row.sessionId));
      sessions.set(row.sessionId, session);
    }
    session.apply(row, deltas);
  }
  const facts = new Map<string, string>();
  for (const [id, session] of sessions) if (session.moved) facts.set(id, session.encode());
  return { facts, deltas: movedDeltas(deltas) };
}

function movedDeltas(deltas: Map<string, PairEdgeDelta>): PairEdgeDelta[] {
  return [...deltas.entries()]
    .filter(([, d]) => d.newSessions > 0 || PAIR_COUNTERS.some((c) => d.counters[c] !== 0))
    .sort(([a], [b]) => compare(a, b))
    .map(([, d]) => d);
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

/**
 * The stored form of a session's facts (one string property), compact because it is read and
 * written whole with every batch of the session: each path once, then one array per pair —
 * `{"v":2,"files":[…],"t":base,"pairs":[[a,b,…counters,lastObservedAt − base],…]}` with `a`,
 * `b` indexes into `files`. Canonical: files sorted, pairs in (a, b) order, base the smallest
 * lastObservedAt, so the same facts always serialise to the same string.
 */
export function encodePairFacts(facts: StoredPairFacts): string {
  return CompactFacts.fromRecord(facts).encode();
}

/**
 * Reads a stored property back; a missing one is no facts yet. Reads both forms: the compact
 * one above and the first one (`{pairKey: [counters…, lastObservedAt]}`), which graphs written
 * before it still hold until the session's next write replaces it.
 */
export function decodePairFacts(stored: string | null | undefined): StoredPairFacts {
  return CompactFacts.parse(stored).toRecord();
}

const WIDTH = PAIR_COUNTERS.length;
/** In a pair's array: [a, b, ...counters, lastObservedAt] (absolute while in memory). */
const LAST = 2 + WIDTH;

/** One session's facts as stored, moved forward in place (files may be added unsorted). */
class CompactFacts {
  moved = false;
  private readonly index: Map<string, number>;
  private byPair: Map<number, number[]> | null = null;
  private filesAdded = false;
  private pairsAdded = false;

  private constructor(
    private readonly files: string[],
    private readonly pairs: number[][],
  ) {
    this.index = new Map(files.map((path, i) => [path, i]));
  }

  static parse(stored: string | null | undefined): CompactFacts {
    if (!stored) return new CompactFacts([], []);
    const parsed: unknown = JSON.parse(stored);
    if (parsed === null || typeof parsed !== 'object') return new CompactFacts([], []);
    if (!isCompact(parsed)) return CompactFacts.fromRecord(parsed as StoredPairFacts);
    for (const pair of parsed.pairs) pair[LAST] += parsed.t;
    return new CompactFacts(parsed.files, parsed.pairs);
  }

  static fromRecord(facts: StoredPairFacts): CompactFacts {
    const out = new CompactFacts([], []);
    for (const key in facts) {
      const split = key.indexOf('\u0000');
      const values = facts[key];
      const pair = [out.fileIndex(key.slice(0, split)), out.fileIndex(key.slice(split + 1))];
      for (let i = 0; i <= WIDTH; i++) pair.push(values[i] ?? 0);
      out.pairs.push(pair);
    }
    out.pairsAdded = true;
    return out;
  }

  toRecord(): StoredPairFacts {
    const facts: StoredPairFacts = {};
    for (const pair of this.pairs) {
      facts[pairKey(this.files[pair[0]], this.files[pair[1]])] = pair.slice(2);
    }
    return facts;
  }

  /** Moves the row's pair forward (never back), adding what it moved to the pair's delta. */
  apply(row: GraphSessionPairRow, deltas: Map<string, PairEdgeDelta>): void {
    const a = this.fileIndex(row.fileA);
    const b = this.fileIndex(row.fileB);
    const byPair = this.pairIndex();
    let pair = byPair.get(a * 0x100000 + b);
    const isNew = pair === undefined;
    if (!pair) {
      pair = [a, b, ...new Array<number>(WIDTH + 1).fill(0)];
    }
    let moved = isNew;
    const grown = new Array<number>(WIDTH);
    for (let i = 0; i < WIDTH; i++) {
      const was = pair[2 + i];
      const next = row[PAIR_COUNTERS[i]];
      grown[i] = next > was ? next - was : 0;
      if (grown[i] !== 0) moved = true;
    }
    const last = row.lastObservedAt > pair[LAST] ? row.lastObservedAt : pair[LAST];
    if (last !== pair[LAST]) moved = true;
    if (!moved) return;
    for (let i = 0; i < WIDTH; i++) pair[2 + i] += grown[i];
    pair[LAST] = last;
    if (isNew) {
      this.pairs.push(pair);
      byPair.set(a * 0x100000 + b, pair);
      this.pairsAdded = true;
    }
    this.moved = true;
    const delta = deltaOf(deltas, row);
    if (isNew) delta.newSessions += 1;
    for (let i = 0; i < WIDTH; i++) delta.counters[PAIR_COUNTERS[i]] += grown[i];
    delta.lastObservedAt = Math.max(delta.lastObservedAt, last);
  }

  /** The canonical stored form (see encodePairFacts). */
  encode(): string {
    let { files, pairs } = this;
    if (this.filesAdded) {
      const order = files.map((_, i) => i).sort((x, y) => compare(files[x], files[y]));
      const remap = new Array<number>(files.length);
      order.forEach((old, i) => (remap[old] = i));
      files = order.map((i) => files[i]);
      pairs = pairs.map((p) => [remap[p[0]], remap[p[1]], ...p.slice(2)]);
    }
    if (this.filesAdded || this.pairsAdded) {
      pairs = [...pairs].sort((x, y) => x[0] - y[0] || x[1] - y[1]);
    }
    let t = Infinity;
    for (const pair of pairs) {
      if (!Number.isSafeInteger(pair[LAST])) {
        t = 0;
        break;
      }
      if (pair[LAST] < t) t = pair[LAST];
    }
    if (pairs.length === 0) t = 0;
    const out = new Array<string>(pairs.length);
    for (let i = 0; i < pairs.length; i++) {
      const pair = pairs[i];
      const last = pair[LAST];
      pair[LAST] = last - t;
      out[i] = JSON.stringify(pair);
      pair[LAST] = last;
    }
    return `{"v":2,"files":${JSON.stringify(files)},"t":${t},"pairs":[${out.join(',')}]}`;
  }

  private fileIndex(path: string): number {
    let i = this.index.get(path);
    if (i === undefined) {
      i = this.files.length;
      this.files.push(path);
      this.index.set(path, i);
      this.filesAdded = true;
    }
    return i;
  }

  private pairIndex(): Map<number, number[]> {
    if (!this.byPair) {
      this.byPair = new Map(this.pairs.map((p) => [p[0] * 0x100000 + p[1], p]));
    }
    return this.byPair;
  }
}

interface CompactPairFacts {
  v: 2;
  files: string[];
  t: number;
  pairs: number[][];
}

function isCompact(parsed: object): parsed is CompactPairFacts {
  return (
    (parsed as { v?: unknown }).v === 2 &&
    Array.isArray((parsed as { files?: unknown }).files) &&
    Array.isArray((parsed as { pairs?: unknown }).pairs)
  );
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
