/**
 * The observer's Cypher (SPEC §5), as named constants: every value is a parameter, labels and
 * relationship types are literals. Snapshot-tested, so a change shows as a diff.
 *
 * Why co-access weights survive a replay. `weight = sessions with both / sessions with either`
 * is a ratio of DISTINCT session counts, and counters incremented per event would count a
 * redelivered or replayed batch twice. So the graph stores per-session facts, keyed by the
 * session, with the session's absolute values so far:
 *   (:Session)-[:TOUCHED {reads, edits, accesses, firstAt, lastAt}]->(:File)
 *   (:Session {pairFacts})  — every pair the session co-accessed, with its counters (JSON)
 *   (:Session)-[:HIT {occurrences, …}]->(:ErrorPattern)
 * and the project-wide `CO_ACCESSED` edge totals move with them: each fact's update adds to its
 * edge exactly the difference between the fact's values after and before (and one session when
 * the fact is new), so writing a fact again adds nothing — the graph after a replay is the graph
 * before it — and no write ever scans the per-session facts (a popular pair has thousands).
 * Sessions with either = the two files' TOUCHED degrees minus both. Fact values only move
 * forward (`atLeast` / `atMost`, libs/core applyPairFacts), so a stale write — an older batch
 * retried after a newer one committed, or a session restarted from scratch after its state was
 * dropped — never rolls anything back. (`ErrorPattern` totals, over far fewer facts, are still
 * recomputed from them.)
 *
 * Why the pair facts live on the session node: as a relationship per session between the two
 * files (the first design), every MERGE expanded thousands of relationships between two dense
 * File nodes, and that was most of the observer's write time. On the session node they are one
 * index seek; the batch's deltas are summed per edge in the client, one row per CO_ACCESSED edge.
 *
 * Concurrency: partitions of other sessions write the same files and pairs at the same time.
 * A transaction takes an edge's write lock (`SET e._lock`, removed in the same statement) before
 * it reads the edge's totals, so increments of concurrent sessions serialise and none is lost;
 * every transaction that changes an input of the derived values (a new TOUCHED of an endpoint,
 * the pair's totals) recomputes them under the same lock, reading every input committed before.
 * Locks are taken in sorted row order; a deadlock that still happens is a transient error and is
 * retried.
 */

import { PAIR_COUNTERS } from '@engram/core';

/** `next` if it is larger than the stored value (or nothing is stored), else the stored value. */
const atLeast = (stored: string, next: string) =>
  `CASE WHEN ${stored} IS NULL OR ${next} > ${stored} THEN ${next} ELSE ${stored} END`;
const atMost = (stored: string, next: string) =>
  `CASE WHEN ${stored} IS NULL OR ${next} < ${stored} THEN ${next} ELSE ${stored} END`;

/** The core's `sessions / max(sessions, na + nb − sessions)` (never above 1). */
const weightOf = (sessions: string, touchedEither: string) =>
  `CASE WHEN ${sessions} = 0 THEN 0.0
        WHEN ${touchedEither} - ${sessions} > ${sessions} THEN toFloat(${sessions}) / (${touchedEither} - ${sessions})
        ELSE 1.0 END`;

export const UPSERT_SESSIONS = `
UNWIND $rows AS row
MERGE (p:Project {tenantId: row.tenantId, projectId: row.projectId})
MERGE (s:Session {id: row.sessionId})
  ON CREATE SET s.tenantId = row.tenantId, s.projectId = row.projectId
SET s.agentId = row.agentId,
    s.startedAt = ${atMost('s.startedAt', 'toInteger(row.startedAt)')},
    s.lastActivityAt = ${atLeast('s.lastActivityAt', 'toInteger(row.lastActivityAt)')},
    s.endedAt = ${atLeast('s.endedAt', 'toInteger(row.endedAt)')},
    s.toolCalls = ${atLeast('s.toolCalls', 'toInteger(row.toolCalls)')}
MERGE (s)-[:IN_PROJECT]->(p)`;

export const UPSERT_TOUCHES = `
UNWIND $rows AS row
MERGE (s:Session {id: row.sessionId})
  ON CREATE SET s.tenantId = row.tenantId, s.projectId = row.projectId
MERGE (f:File {tenantId: row.tenantId, projectId: row.projectId, path: row.path})
  ON CREATE SET f.module = row.module
MERGE (s)-[t:TOUCHED]->(f)
SET t.reads = ${atLeast('t.reads', 'toInteger(row.reads)')},
    t.edits = ${atLeast('t.edits', 'toInteger(row.edits)')},
    t.accesses = ${atLeast('t.accesses', 'toInteger(row.accesses)')},
    t.firstAt = ${atMost('t.firstAt', 'toInteger(row.firstAt)')},
    t.lastAt = ${atLeast('t.lastAt', 'toInteger(row.lastAt)')}`;

/**
 * The sessions' stored pair facts (see session-pair-facts.ts in libs/core), each session's node
 * write-locked until the transaction ends: its facts are read, moved forward in the client and
 * written back in this transaction, so a zombie writer of the same session cannot interleave.
 */
export const LOCK_SESSION_PAIR_FACTS = `
UNWIND $rows AS row
MERGE (s:Session {id: row.sessionId})
  ON CREATE SET s.tenantId = row.tenantId, s.projectId = row.projectId
SET s._lock = true
REMOVE s._lock
RETURN s.id AS sessionId, s.pairFacts AS pairFacts`;

export const WRITE_SESSION_PAIR_FACTS = `
UNWIND $rows AS row
MATCH (s:Session {id: row.sessionId})
SET s.pairFacts = row.pairFacts`;

/**
 * Moves each pair's CO_ACCESSED totals by what the batch's session facts moved (summed per pair
 * in the client: one row per edge, however many sessions). The edge's write lock is taken before
 * its totals are read, so concurrent batches of other sessions add up and none is lost.
 */
export const ADD_CO_ACCESS_DELTAS = `
UNWIND $rows AS row
MERGE (a:File {tenantId: row.tenantId, projectId: row.projectId, path: row.fileA})
MERGE (b:File {tenantId: row.tenantId, projectId: row.projectId, path: row.fileB})
MERGE (a)-[e:CO_ACCESSED]->(b)
SET e._lock = true
SET e.sessionCount = coalesce(e.sessionCount, 0) + toInteger(row.newSessions),
    ${PAIR_COUNTERS.map((c) => `e.${c} = coalesce(e.${c}, 0) + toInteger(row.${c})`).join(',\n    ')},
    e.lastObservedAt = ${atLeast('e.lastObservedAt', 'toInteger(row.lastObservedAt)')}
REMOVE e._lock`;

/**
 * The derived values of each changed CO_ACCESSED edge (fileA < fileB) from its totals and the
 * two files' TOUCHED degrees (a degree lookup, not a scan): weight, average time delta and
 * direction. `$directionalShare` / `$directionalMinSamples` are the core's DirectionRule.
 */
export const RECOMPUTE_CO_ACCESSED = `
UNWIND $rows AS row
MATCH (a:File {tenantId: row.tenantId, projectId: row.projectId, path: row.fileA})
      -[e:CO_ACCESSED]->(b:File {tenantId: row.tenantId, projectId: row.projectId, path: row.fileB})
SET e._lock = true
WITH e, COUNT { (a)<-[:TOUCHED]-() } + COUNT { (b)<-[:TOUCHED]-() } AS touchedEither,
     CASE WHEN e.aThenB >= e.bThenA THEN e.aThenB ELSE e.bThenA END AS majority
WITH e, touchedEither,
     CASE WHEN e.aThenB + e.bThenA = 0 OR e.aThenB + e.bThenA < $directionalMinSamples THEN false
          ELSE toFloat(majority) / (e.aThenB + e.bThenA) >= $directionalShare END AS directional
SET e.weight = ${weightOf('e.sessionCount', 'touchedEither')},
    e.avgTimeDeltaMs = CASE WHEN e.timedCount = 0 THEN 0.0 ELSE toFloat(e.timeDeltaSumMs) / e.timedCount END,
    e.directional = directional,
    e.direction = CASE WHEN NOT directional THEN 'none' WHEN e.aThenB >= e.bThenA THEN 'a_to_b' ELSE 'b_to_a' END
REMOVE e._lock`;

/**
 * A file touched by one more session: "sessions with either" grew for all of its edges, so their
 * weights are recomputed (from the stored per-pair session count and the two TOUCHED degrees).
 */
export const REFRESH_FILE_WEIGHTS = `
UNWIND $rows AS row
MATCH (f:File {tenantId: row.tenantId, projectId: row.projectId, path: row.path})-[e:CO_ACCESSED]-(o:File)
SET e._lock = true
WITH f, o, e
WITH e, COUNT { (f)<-[:TOUCHED]-() } + COUNT { (o)<-[:TOUCHED]-() } AS touchedEither
SET e.weight = ${weightOf('e.sessionCount', 'touchedEither')}
REMOVE e._lock`;

export const UPSERT_ERROR_HITS = `
UNWIND $rows AS row
MERGE (e:ErrorPattern {tenantId: row.tenantId, projectId: row.projectId, hash: row.hash})
  ON CREATE SET e.toolName = row.toolName, e.normalisedError = row.normalisedError
MERGE (s:Session {id: row.sessionId})
  ON CREATE SET s.tenantId = row.tenantId, s.projectId = row.projectId
MERGE (s)-[h:HIT]->(e)
SET h.occurrences = ${atLeast('h.occurrences', 'toInteger(row.occurrences)')},
    h.episodes = ${atLeast('h.episodes', 'toInteger(row.episodes)')},
    h.resolvedEpisodes = ${atLeast('h.resolvedEpisodes', 'toInteger(row.resolvedEpisodes)')},
    h.lastSeenAt = ${atLeast('h.lastSeenAt', 'toInteger(row.lastSeenAt)')},
    h.sampleMessage = row.sampleMessage,
    h.lastResolution = row.lastResolution`;

export const RECOMPUTE_ERROR_PATTERNS = `
UNWIND $rows AS row
MATCH (e:ErrorPattern {tenantId: row.tenantId, projectId: row.projectId, hash: row.hash})
SET e._lock = true
WITH e
CALL (e) {
  MATCH (:Session)-[h:HIT]->(e)
  RETURN count(h) AS sessions, sum(h.occurrences) AS occurrences, max(h.lastSeenAt) AS lastSeenAt
}
SET e.sessionCount = sessions, e.occurrences = occurrences, e.lastSeenAt = lastSeenAt
REMOVE e._lock`;

/** The file's neighbours: highest weight first, then raw count, then path (as the core sorts). */
export const TOP_CO_ACCESS_NEIGHBOURS = `
MATCH (f:File {tenantId: $tenantId, projectId: $projectId, path: $path})-[e:CO_ACCESSED]-(n:File)
RETURN n.path AS file, e.weight AS weight, e.rawCount AS rawCount,
       e.sessionCount AS sessionCount, e.avgTimeDeltaMs AS avgTimeDeltaMs,
       e.direction AS direction, startNode(e) = f AS queriedIsA, e.lastObservedAt AS lastObservedAt
ORDER BY weight DESC, rawCount DESC, file ASC
LIMIT $k`;

/** The tenants that have a project of this id (the CLI resolves `--project` without a tenant). */
export const TENANTS_OF_PROJECT = `
MATCH (p:Project {projectId: $projectId})
RETURN p.tenantId AS tenantId
ORDER BY tenantId`;
