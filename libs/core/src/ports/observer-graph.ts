/**
 * What the observer writes to the graph after each batch (SPEC §5): per-session facts with their
 * absolute values so far, never increments. A fact is keyed by its session, so writing it again
 * — a retried batch, a redelivery, a replay from offset 0 — leaves the graph as it was.
 * The port of the observer's graph: Neo4j in distributed mode (libs/neo4j), SQLite embedded
 * (libs/embedded); one contract suite (ports/testing/observer-graph.contract.ts) runs on both.
 */
export interface GraphScope {
  tenantId: string;
  projectId: string;
}

/** `(:Session {id})-[:IN_PROJECT]->(:Project {tenantId, projectId})`. */
export interface GraphSessionRow extends GraphScope {
  sessionId: string;
  agentId: string;
  startedAt: number | null;
  lastActivityAt: number;
  endedAt: number | null;
  /** Distinct tool calls seen so far. */
  toolCalls: number;
}

/** `(:Session)-[:TOUCHED]->(:File {tenantId, projectId, path})`: the session's use of a file. */
export interface GraphTouchRow extends GraphScope {
  sessionId: string;
  path: string;
  module: string;
  reads: number;
  edits: number;
  /** Steps at which the file was read or edited (or searched, run on…): file_access signals. */
  accesses: number;
  firstAt: number;
  lastAt: number;
}

/**
 * One session's co-access of a pair, fileA < fileB (the core's CoAccessPairStat, for one
 * session), absolute so far. The project-wide `CO_ACCESSED` edge moves by what these facts moved
 * (applyPairFacts); a store keeps them per session (Neo4j: on the Session node).
 */
export interface GraphSessionPairRow extends GraphScope {
  sessionId: string;
  fileA: string;
  fileB: string;
  rawCount: number;
  timeDeltaSumMs: number;
  timedCount: number;
  aThenB: number;
  bThenA: number;
  sameStep: number;
  lastObservedAt: number;
}

/** `(:Session)-[:HIT]->(:ErrorPattern {tenantId, projectId, hash})`. */
export interface GraphErrorRow extends GraphScope {
  sessionId: string;
  hash: string;
  toolName: string;
  normalisedError: string;
  /** The session's latest raw message (redacted), truncated. */
  sampleMessage: string;
  occurrences: number;
  /** error_retry signals: each a run of failures that ended (resolved or not). */
  episodes: number;
  resolvedEpisodes: number;
  lastResolution: string | null;
  lastSeenAt: number;
}

export interface GraphFileRef extends GraphScope {
  path: string;
}

export interface ObserverGraphBatch {
  sessions: GraphSessionRow[];
  touches: GraphTouchRow[];
  sessionPairs: GraphSessionPairRow[];
  errors: GraphErrorRow[];
  /**
   * Files a session touched for the first time in this batch: sessions touching them grew, so
   * the weight of every CO_ACCESSED edge they have changes (sessions with either grew).
   */
  newlyTouchedFiles: GraphFileRef[];
}

export function emptyGraphBatch(): ObserverGraphBatch {
  return { sessions: [], touches: [], sessionPairs: [], errors: [], newlyTouchedFiles: [] };
}

export function isEmptyGraphBatch(batch: ObserverGraphBatch): boolean {
  return (
    batch.sessions.length === 0 &&
    batch.touches.length === 0 &&
    batch.sessionPairs.length === 0 &&
    batch.errors.length === 0 &&
    batch.newlyTouchedFiles.length === 0
  );
}

/**
 * A batch cut in two by session, for a store that refuses the whole as too big for one
 * transaction. A session's rows stay together (its pair facts and touches are its own); writing
 * the halves one after the other leaves the graph as the whole would, since every row is an
 * absolute fact (and a half written twice, on a retry, changes nothing). The files newly touched
 * go with the second half, so their edges' weights are refreshed once every touch is written.
 * Null when the batch holds fewer than two sessions.
 */
export function splitGraphBatch(
  batch: ObserverGraphBatch,
): [ObserverGraphBatch, ObserverGraphBatch] | null {
  const rows = [...batch.sessions, ...batch.touches, ...batch.sessionPairs, ...batch.errors];
  const sessionIds = [...new Set(rows.map((row) => row.sessionId))].sort();
  if (sessionIds.length < 2) return null;
  const first = new Set(sessionIds.slice(0, Math.ceil(sessionIds.length / 2)));
  const half = (inFirst: boolean): ObserverGraphBatch => {
    const mine = (row: { sessionId: string }) => first.has(row.sessionId) === inFirst;
    return {
      sessions: batch.sessions.filter(mine),
      touches: batch.touches.filter(mine),
      sessionPairs: batch.sessionPairs.filter(mine),
      errors: batch.errors.filter(mine),
      newlyTouchedFiles: inFirst ? [] : batch.newlyTouchedFiles,
    };
  };
  return [half(true), half(false)];
}

/** The graph writes of a batch; throws DownstreamUnavailableError while the store is down. */
export interface ObserverGraphWriter {
  write(batch: ObserverGraphBatch): Promise<void>;
}

/** When a pair counts as directional (the core's DirectionRule, SPEC §5 chosen numbers). */
export interface CoAccessDirectionRule {
  directionalShare: number;
  directionalMinSamples: number;
}

/** One neighbour of a file, as `engram neighbors` prints it. */
export interface GraphCoAccessNeighbour {
  file: string;
  weight: number;
  rawCount: number;
  sessionCount: number;
  avgTimeDeltaMs: number;
  /** outgoing: the queried file usually comes first; incoming: the neighbour does. */
  direction: 'outgoing' | 'incoming' | 'both';
  lastObservedAt: number;
}

/** A co-access edge of the queried file with whether agents were seen using the pair. */
export interface GraphCoAccessEdgeEvidence extends GraphCoAccessNeighbour {
  /** False when only `engram bootstrap`'s co-commits (no measured time delta) made the edge. */
  observed: boolean;
}

/** A file of the project, as evidence for predicting what a session touching the query file touches. */
export interface GraphFileEvidence {
  file: string;
  /** Sessions of the project that touched it (observed sessions and bootstrap commits). */
  sessions: number;
  /** Of the query file's sessions considered, those that touched this file too. */
  withQuery: number;
}

/**
 * What a store knows about the files a session touching `path` may touch (SPEC §12 `engram
 * neighbors`), ranked by the core's `rankFileNeighbours`, so every store ranks alike.
 */
export interface GraphNeighbourEvidence {
  /** Sessions of the project (observed and bootstrap commits). */
  projectSessions: number;
  /** The query file's sessions considered: its `sessionWindow` most recent ones. */
  querySessions: number;
  /**
   * Every file touched in those sessions, and the project's `popular` most-touched files that
   * none of them touched (the fallback), each with its session counts; never the query file.
   */
  files: GraphFileEvidence[];
  /** The query file's CO_ACCESSED edges (any number). */
  edges: GraphCoAccessEdgeEvidence[];
}

export interface GraphNeighbourEvidenceQuery extends GraphScope {
  path: string;
  /** How many of the project's most-touched files to add beyond the sessions' (the fallback). */
  popular: number;
  /** How many of the query file's most recent sessions to count co-occurrences in. */
  sessionWindow: number;
}

/** A file's co-access neighbours, and which tenants have a project: what `engram neighbors` reads. */
export interface CoAccessReader {
  topCoAccessNeighbours(
    query: GraphScope & { path: string; k: number },
  ): Promise<GraphCoAccessNeighbour[]>;
  /** The evidence `engram neighbors` ranks (empty when the project or file is unknown). */
  neighbourEvidence(query: GraphNeighbourEvidenceQuery): Promise<GraphNeighbourEvidence>;
  tenantsOfProject(projectId: string): Promise<string[]>;
}

/** The observer's graph store: written by the observer, read by neighbours queries. */
export interface ObserverGraphStore extends ObserverGraphWriter, CoAccessReader {}
