import { join } from 'node:path';
import {
  emptyCoAccessAggregate,
  MisconfigurationError,
  pairKeyOf,
  topNeighbours,
  type CoAccessDirectionRule,
  type GraphCoAccessEdgeEvidence,
  type GraphCoAccessNeighbour,
  type GraphFileEvidence,
  type GraphNeighbourEvidence,
  type GraphNeighbourEvidenceQuery,
  type GraphScope,
  type ObserverGraphBatch,
  type ObserverGraphStore,
} from '@engram/core';
import BetterSqlite3, { type Database } from 'better-sqlite3';
import { preparePrivateDatabase } from './private-files';

/**
 * The observer's per-session facts, as the Neo4j graph keeps them (SPEC §5): one row per
 * session and file, per session and file pair, per session and error pattern. Every upsert keeps
 * the larger counts and the earlier first-time (`max`/`min`), so writing a fact again — a retry, a
 * redelivery, a replay — changes nothing. The project-wide co-access edges are not materialised:
 * embedded mode has one reader and one writer in one process, so a neighbours query aggregates
 * the file's pairs (indexed) and ranks them with the core's own `topNeighbours`, and `engram
 * neighbors`' evidence (the file's sessions' other files, the most-touched files) is read from
 * the touches and ranked by the core's `rankFileNeighbours`, as on Neo4j.
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS graph_sessions (
  session_id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, project_id TEXT NOT NULL,
  agent_id TEXT NOT NULL, started_at INTEGER, last_activity_at INTEGER NOT NULL,
  ended_at INTEGER, tool_calls INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS graph_sessions_project ON graph_sessions (project_id, tenant_id);
CREATE TABLE IF NOT EXISTS graph_touches (
  tenant_id TEXT NOT NULL, project_id TEXT NOT NULL, path TEXT NOT NULL, session_id TEXT NOT NULL,
  module TEXT NOT NULL, reads INTEGER NOT NULL, edits INTEGER NOT NULL, accesses INTEGER NOT NULL,
  first_at INTEGER NOT NULL, last_at INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, project_id, path, session_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS graph_session_pairs (
  tenant_id TEXT NOT NULL, project_id TEXT NOT NULL, file_a TEXT NOT NULL, file_b TEXT NOT NULL,
  session_id TEXT NOT NULL, raw_count INTEGER NOT NULL, time_delta_sum_ms INTEGER NOT NULL,
  timed_count INTEGER NOT NULL, a_then_b INTEGER NOT NULL, b_then_a INTEGER NOT NULL,
  same_step INTEGER NOT NULL, last_observed_at INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, project_id, file_a, file_b, session_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS graph_touches_session
  ON graph_touches (tenant_id, project_id, session_id);
CREATE INDEX IF NOT EXISTS graph_session_pairs_b
  ON graph_session_pairs (tenant_id, project_id, file_b);
CREATE TABLE IF NOT EXISTS graph_error_hits (
  tenant_id TEXT NOT NULL, project_id TEXT NOT NULL, hash TEXT NOT NULL, session_id TEXT NOT NULL,
  tool_name TEXT NOT NULL, normalised_error TEXT NOT NULL, sample_message TEXT NOT NULL,
  occurrences INTEGER NOT NULL, episodes INTEGER NOT NULL, resolved_episodes INTEGER NOT NULL,
  last_resolution TEXT, last_seen_at INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, project_id, hash, session_id)
) WITHOUT ROWID;
`;

const UPSERT_SESSION = `
INSERT INTO graph_sessions VALUES
  (@sessionId, @tenantId, @projectId, @agentId, @startedAt, @lastActivityAt, @endedAt, @toolCalls)
ON CONFLICT (session_id) DO UPDATE SET
  agent_id = excluded.agent_id,
  started_at = coalesce(min(started_at, excluded.started_at), started_at, excluded.started_at),
  last_activity_at = max(last_activity_at, excluded.last_activity_at),
  ended_at = coalesce(max(ended_at, excluded.ended_at), ended_at, excluded.ended_at),
  tool_calls = max(tool_calls, excluded.tool_calls)`;

const UPSERT_TOUCH = `
INSERT INTO graph_touches VALUES
  (@tenantId, @projectId, @path, @sessionId, @module, @reads, @edits, @accesses, @firstAt, @lastAt)
ON CONFLICT DO UPDATE SET
  reads = max(reads, excluded.reads), edits = max(edits, excluded.edits),
  accesses = max(accesses, excluded.accesses), first_at = min(first_at, excluded.first_at),
  last_at = max(last_at, excluded.last_at)`;

const UPSERT_PAIR = `
INSERT INTO graph_session_pairs VALUES
  (@tenantId, @projectId, @fileA, @fileB, @sessionId, @rawCount, @timeDeltaSumMs, @timedCount,
   @aThenB, @bThenA, @sameStep, @lastObservedAt)
ON CONFLICT DO UPDATE SET
  raw_count = max(raw_count, excluded.raw_count),
  time_delta_sum_ms = max(time_delta_sum_ms, excluded.time_delta_sum_ms),
  timed_count = max(timed_count, excluded.timed_count),
  a_then_b = max(a_then_b, excluded.a_then_b), b_then_a = max(b_then_a, excluded.b_then_a),
  same_step = max(same_step, excluded.same_step),
  last_observed_at = max(last_observed_at, excluded.last_observed_at)`;

const UPSERT_ERROR = `
INSERT INTO graph_error_hits VALUES
  (@tenantId, @projectId, @hash, @sessionId, @toolName, @normalisedError, @sampleMessage,
   @occurrences, @episodes, @resolvedEpisodes, @lastResolution, @lastSeenAt)
ON CONFLICT DO UPDATE SET
  occurrences = max(occurrences, excluded.occurrences), episodes = max(episodes, excluded.episodes),
  resolved_episodes = max(resolved_episodes, excluded.resolved_episodes),
  last_seen_at = max(last_seen_at, excluded.last_seen_at),
  sample_message = excluded.sample_message, last_resolution = excluded.last_resolution`;

/** The queried file's pairs, summed over sessions. */
const PAIRS_OF_FILE = `
SELECT file_a AS fileA, file_b AS fileB, count(*) AS sessionCount, sum(raw_count) AS rawCount,
       sum(time_delta_sum_ms) AS timeDeltaSumMs, sum(timed_count) AS timedCount,
       sum(a_then_b) AS aThenB, sum(b_then_a) AS bThenA, sum(same_step) AS sameStep,
       max(last_observed_at) AS lastObservedAt
FROM graph_session_pairs
WHERE tenant_id = @tenantId AND project_id = @projectId AND (file_a = @path OR file_b = @path)
GROUP BY file_a, file_b`;

const SESSIONS_TOUCHING = `
SELECT count(*) AS sessions FROM graph_touches
WHERE tenant_id = @tenantId AND project_id = @projectId AND path = @path`;

const SESSIONS_OF_PROJECT = `
SELECT count(*) FROM graph_sessions WHERE tenant_id = @tenantId AND project_id = @projectId`;

/** The query file's latest sessions (a CTE of the two statements below). */
const SESSIONS_WITH_FILE = `
WITH mine AS (
  SELECT session_id FROM graph_touches
  WHERE tenant_id = @tenantId AND project_id = @projectId AND path = @path
  ORDER BY last_at DESC, session_id LIMIT @sessionWindow),
together AS (
  SELECT t.path AS file, count(*) AS withQuery
  FROM mine JOIN graph_touches t
    ON t.tenant_id = @tenantId AND t.project_id = @projectId AND t.session_id = mine.session_id
  GROUP BY t.path)`;

/** The files of those sessions, with how many of them touched each, and their own sessions. */
const FILES_WITH_FILE = `${SESSIONS_WITH_FILE}
SELECT file, withQuery,
       (SELECT count(*) FROM graph_touches a
        WHERE a.tenant_id = @tenantId AND a.project_id = @projectId AND a.path = file) AS sessions
FROM together`;

/** The project's most-touched files (by sessions) that none of those sessions touched. */
const POPULAR_FILES = `${SESSIONS_WITH_FILE}
SELECT path AS file, count(*) AS sessions, 0 AS withQuery FROM graph_touches
WHERE tenant_id = @tenantId AND project_id = @projectId AND path <> @path
  AND path NOT IN (SELECT file FROM together)
GROUP BY path ORDER BY sessions DESC, path LIMIT @popular`;

const TENANTS_OF_PROJECT = `
SELECT DISTINCT tenant_id AS tenantId FROM graph_sessions WHERE project_id = ? ORDER BY tenant_id`;

interface PairRow {
  fileA: string;
  fileB: string;
  sessionCount: number;
  rawCount: number;
  timeDeltaSumMs: number;
  timedCount: number;
  aThenB: number;
  bThenA: number;
  sameStep: number;
  lastObservedAt: number;
}

export interface SqliteObserverGraphOptions {
  dataDir: string;
  /** Default `graph.db`. */
  fileName?: string;
  rule: CoAccessDirectionRule;
}

/** The observer graph on SQLite (embedded mode): the same port as the Neo4j adapter. */
export class SqliteObserverGraph implements ObserverGraphStore {
  readonly path: string;
  readonly counters = { batches: 0, rows: 0 };
  private readonly db: Database;
  private readonly rule: CoAccessDirectionRule;

  private constructor(options: SqliteObserverGraphOptions) {
    this.path = join(options.dataDir, options.fileName ?? 'graph.db');
    // Private to the user (dir 0700, database and journals 0600): it holds prompts and code.
    preparePrivateDatabase(options.dataDir, this.path);
    this.rule = options.rule;
    this.db = new BetterSqlite3(this.path, { timeout: 10_000 });
    const mode = this.db.pragma('journal_mode = WAL', { simple: true }) as string;
    if (mode !== 'wal') {
      this.db.close();
      throw new MisconfigurationError(
        `${this.path}: SQLite refused WAL mode (journal_mode=${mode}); put --data-dir on a local disk`,
      );
    }
    this.db.exec(SCHEMA);
  }

  static open(options: SqliteObserverGraphOptions): SqliteObserverGraph {
    return new SqliteObserverGraph(options);
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  /** One SQLite transaction per batch: all of its facts or none. */
  // async: a SQLite error becomes a rejected promise, as the port's callers expect.
  async write(batch: ObserverGraphBatch): Promise<void> {
    const statements: [string, object[]][] = [
      [UPSERT_SESSION, batch.sessions],
      [UPSERT_TOUCH, batch.touches],
      [UPSERT_PAIR, batch.sessionPairs],
      [UPSERT_ERROR, batch.errors],
    ];
    this.db.transaction(() => {
      for (const [sql, rows] of statements) {
        if (rows.length === 0) continue;
        const statement = this.db.prepare(sql);
        for (const row of rows) statement.run(row);
        this.counters.rows += rows.length;
      }
    })();
    this.counters.batches += 1;
    return Promise.resolve();
  }

  async topCoAccessNeighbours(
    query: GraphScope & { path: string; k: number },
  ): Promise<GraphCoAccessNeighbour[]> {
    return Promise.resolve(this.coAccessEdges(query, query.k).map(({ observed: _, ...n }) => n));
  }

  /** The file's CO_ACCESSED edges as the core ranks them, each with whether agents made it. */
  private coAccessEdges(
    query: GraphScope & { path: string },
    k: number,
  ): GraphCoAccessEdgeEvidence[] {
    const pairs = this.db.prepare(PAIRS_OF_FILE).all(query) as PairRow[];
    const aggregate = emptyCoAccessAggregate();
    const sessionsOf = this.db.prepare(SESSIONS_TOUCHING).pluck();
    for (const pair of pairs) {
      const key = pairKeyOf(pair.fileA, pair.fileB);
      aggregate.pairs[key] = pair;
      (aggregate.adjacency[query.path] ??= []).push(key);
      for (const path of [pair.fileA, pair.fileB]) {
        aggregate.files[path] ??= { sessionCount: sessionsOf.get({ ...query, path }) as number };
      }
    }
    const other = (p: PairRow) => (p.fileA === query.path ? p.fileB : p.fileA);
    const byFile = new Map(pairs.map((p) => [other(p), p]));
    return topNeighbours(aggregate, query.path, k, this.rule).map((n) => ({
      ...n,
      lastObservedAt: byFile.get(n.file)?.lastObservedAt ?? 0,
      // Co-commits (engram bootstrap) have no time delta: timed observations are agents'.
      observed: (byFile.get(n.file)?.timedCount ?? 0) > 0,
    }));
  }

  /** The core's evidence for `rankFileNeighbours` (SPEC §12 `engram neighbors`). */
  async neighbourEvidence(query: GraphNeighbourEvidenceQuery): Promise<GraphNeighbourEvidence> {
    const read = this.db.transaction(() => {
      const projectSessions = this.db.prepare(SESSIONS_OF_PROJECT).pluck().get(query) as number;
      const together = this.db.prepare(FILES_WITH_FILE).all(query) as GraphFileEvidence[];
      const popular = this.db.prepare(POPULAR_FILES).all(query) as GraphFileEvidence[];
      const edges = this.coAccessEdges(query, Number.MAX_SAFE_INTEGER);
      return { projectSessions, together, popular, edges };
    })();
    const mine = read.together.find((file) => file.file === query.path);
    return Promise.resolve({
      projectSessions: read.projectSessions,
      querySessions: mine?.withQuery ?? 0,
      files: [...read.together.filter((file) => file.file !== query.path), ...read.popular],
      edges: read.edges,
    });
  }

  async tenantsOfProject(projectId: string): Promise<string[]> {
    return Promise.resolve(this.db.prepare(TENANTS_OF_PROJECT).pluck().all(projectId) as string[]);
  }
}
