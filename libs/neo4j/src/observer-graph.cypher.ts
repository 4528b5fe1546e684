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
 * They are stored compact (libs/core encodePairFacts: each path once, then one array per pair),
 * because a session's facts are read and written whole with each of its batches; the first,
 * keyed JSON form is still read (graphs written before it), and replaced at the session's next
 * write — no migration needed.
 *
 * Write cost (PROFILE, `engram bench observe --distributed`): a batch's statements create no node
 * and read nothing back that an earlier row of the same statement wrote — projects, sessions and
 * files are MERGEd first, once each, and later statements MATCH them (no Eager, no composite-key
 * seek per row: touches are grouped by file). CO_ACCESSED edges are changed in one pass per file
 * (UPDATE_CO_ACCESSED: one expansion of the file's edges joined with the batch's deltas by path)
 * rather than one MERGE per delta, whose Expand(Into) between two dense files read ~70 relationships
 * a row, and totals, derived values and weight are written by one SET per edge. Only the edges that
 * do not exist yet are MERGEd (CREATE_CO_ACCESSED).
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

/** Each project of the batch's sessions, once (before the sessions, which MATCH it). */
export const MERGE_PROJECTS = `
UNWIND $rows AS row
MERGE (:Project {tenantId: row.tenantId, projectId: row.projectId})`;

/**
 * The batch's sessions, write-locked until the transaction ends (SET), and the stored pair facts
 * of those with pair rows (`row.withFacts`), read under that lock: they are moved forward in the
 * client and written back in this transaction, so a zombie writer of the same session cannot
 * interleave. The project exists (MERGE_PROJECTS ran first).
 */
export const UPSERT_SESSIONS = `
UNWIND $rows AS row
MATCH (p:Project {tenantId: row.tenantId, projectId: row.projectId})
MERGE (s:Session {id: row.sessionId})
  ON CREATE SET s.tenantId = row.tenantId, s.projectId = row.projectId
SET s.agentId = row.agentId,
    s.startedAt = ${atMost('s.startedAt', 'toInteger(row.startedAt)')},
    s.lastActivityAt = ${atLeast('s.lastActivityAt', 'toInteger(row.lastActivityAt)')},
    s.endedAt = ${atLeast('s.endedAt', 'toInteger(row.endedAt)')},
    s.toolCalls = ${atLeast('s.toolCalls', 'toInteger(row.toolCalls)')}
MERGE (s)-[:IN_PROJECT]->(p)
RETURN s.id AS sessionId, CASE WHEN row.withFacts THEN s.pairFacts END AS pairFacts`;

/**
 * Sessions the batch's touches, pairs or errors name without a session row (none, from the
 * observer): created bare if new, write-locked, and their stored pair facts read under the lock.
 */
export const LOCK_SESSION_PAIR_FACTS = `
UNWIND $rows AS row
MERGE (s:Session {id: row.sessionId})
  ON CREATE SET s.tenantId = row.tenantId, s.projectId = row.projectId
SET s._lock = true
REMOVE s._lock
RETURN s.id AS sessionId, s.pairFacts AS pairFacts`;

/**
 * The batch's files, each once, before any statement that relates them (which then MATCH them:
 * one index seek, no MERGE per row). `row.module` is null for a file only a pair names.
 */
export const MERGE_FILES = `
UNWIND $rows AS row
MERGE (f:File {tenantId: row.tenantId, projectId: row.projectId, path: row.path})
  ON CREATE SET f.module = row.module`;

/**
 * The batch's touches, grouped by file (one composite-key seek per file, not per touch). The
 * sessions and files exist (UPSERT_SESSIONS, LOCK_SESSION_PAIR_FACTS and MERGE_FILES ran); a new
 * TOUCHED takes the row's values as they are, an existing one moves forward only.
 */
export const UPSERT_TOUCHES = `
UNWIND $files AS file
MATCH (f:File {tenantId: file.tenantId, projectId: file.projectId, path: file.path})
UNWIND file.touches AS row
MATCH (s:Session {id: row.sessionId})
MERGE (s)-[t:TOUCHED]->(f)
  ON CREATE SET t.reads = toInteger(row.reads), t.edits = toInteger(row.edits),
    t.accesses = toInteger(row.accesses), t.firstAt = toInteger(row.firstAt),
    t.lastAt = toInteger(row.lastAt)
  ON MATCH SET t.reads = ${atLeast('t.reads', 'toInteger(row.reads)')},
    t.edits = ${atLeast('t.edits', 'toInteger(row.edits)')},
    t.accesses = ${atLeast('t.accesses', 'toInteger(row.accesses)')},
    t.firstAt = ${atMost('t.firstAt', 'toInteger(row.firstAt)')},
    t.lastAt = ${atLeast('t.lastAt', 'toInteger(row.lastAt)')}`;

export const WRITE_SESSION_PAIR_FACTS = `
UNWIND $rows AS row
MATCH (s:Session {id: row.sessionId})
SET s.pairFacts = row.pairFacts`;

/**
 * An edge's totals moved by a delta `d` as the client sends it — [newSessions, ...PAIR_COUNTERS,
 * lastObservedAt] — as a list in that order (sessionCount first); null when `d` is null (a
 * weight-only refresh). Read after the edge's write lock is taken.
 */
const movedTotals = (e: string, d: string) => `CASE WHEN ${d} IS NULL THEN null ELSE [
         coalesce(${e}.sessionCount, 0) + toInteger(${d}[0]),
         ${PAIR_COUNTERS.map((c, i) => `coalesce(${e}.${c}, 0) + toInteger(${d}[${i + 1}])`).join(',\n         ')},
         ${atLeast(`${e}.lastObservedAt`, `toInteger(${d}[${PAIR_COUNTERS.length + 1}])`)}] END`;

const total = (t: string, counter: (typeof PAIR_COUNTERS)[number]) =>
  `${t}[${PAIR_COUNTERS.indexOf(counter) + 1}]`;

/**
 * What an edge's SET writes (`SET e += …`): with moved totals `t`, the totals and every value
 * derived from them — average time delta, direction (`$directionalShare` /
 * `$directionalMinSamples` are the core's DirectionRule), weight —; without, the weight alone
 * (its other input, a file's TOUCHED degree, moved). `touchedEither` = the two files' degrees,
 * `sessions` the edge's session count (moved or not).
 */
const edgeValues = (t: string) => {
  const aThenB = total(t, 'aThenB');
  const bThenA = total(t, 'bThenA');
  const samples = `(${aThenB} + ${bThenA})`;
  const majority = `CASE WHEN ${aThenB} >= ${bThenA} THEN ${aThenB} ELSE ${bThenA} END`;
  const directional = `(${samples} > 0 AND ${samples} >= $directionalMinSamples
      AND toFloat(${majority}) / ${samples} >= $directionalShare)`;
  const weight = weightOf('sessions', 'touchedEither');
  return `CASE WHEN ${t} IS NULL THEN {weight: ${weight}} ELSE {
    sessionCount: ${t}[0],
    ${PAIR_COUNTERS.map((c) => `${c}: ${total(t, c)}`).join(',\n    ')},
    lastObservedAt: ${t}[${PAIR_COUNTERS.length + 1}],
    avgTimeDeltaMs: CASE WHEN ${total(t, 'timedCount')} = 0 THEN 0.0
      ELSE toFloat(${total(t, 'timeDeltaSumMs')}) / ${total(t, 'timedCount')} END,
    directional: ${directional},
    direction: CASE WHEN NOT ${directional} THEN 'none'
      WHEN ${aThenB} >= ${bThenA} THEN 'a_to_b' ELSE 'b_to_a' END,
    weight: ${weight}} END`;
};

/**
 * Every CO_ACCESSED edge the batch changed, in one pass per file: the edges a batch's pair facts
 * moved (their totals, direction and weight) and the edges of files a session touched for the
 * first time (their weight: "sessions with either" grew). `$projects` holds, per project,
 * `files` — each file that is fileA of a delta or newly touched (`touched`), sorted, with its
 * deltas by fileB (`deltas`, fileB → [newSessions, counters…, lastObservedAt]; `pathsB`, their
 * keys in order) — and `state`, path → 1 (one of those files) or 2 (one of them, newly touched).
 *
 * Each edge is visited from one end only: from fileA, or from fileB when fileA is not one of the
 * files (then it has no delta). One expansion of the file's CO_ACCESSED edges joins them with the
 * deltas by path, instead of one Expand(Into) between two dense files per delta. Each changed
 * edge's write lock is taken before its totals and the two TOUCHED degrees are read (a degree
 * lookup, not a scan), so concurrent batches of other sessions add up and every weight is
 * computed from inputs committed before; then one SET writes what changed. Returns, per fileA,
 * the deltas whose edge does not exist yet (CREATE_CO_ACCESSED makes them).
 */
export const UPDATE_CO_ACCESSED = `
UNWIND $projects AS project
UNWIND project.files AS row
MATCH (f:File {tenantId: project.tenantId, projectId: project.projectId, path: row.path})
CALL (f, row, project) {
  MATCH (f)-[e:CO_ACCESSED]-(o)
  WITH f, row, e, o, startNode(e) = f AS fIsA, project.state[o.path] AS oState
  WHERE fIsA OR oState IS NULL
  WITH f, e, o, CASE WHEN fIsA THEN row.deltas[o.path] END AS d, row.touched OR oState = 2 AS refresh
  WHERE d IS NOT NULL OR refresh
  SET e._lock = true
  WITH e, o, d, COUNT { (f)<-[:TOUCHED]-() } + COUNT { (o)<-[:TOUCHED]-() } AS touchedEither,
       ${movedTotals('e', 'd')} AS t
  WITH e, o, d, t, touchedEither, coalesce(t[0], e.sessionCount) AS sessions
  SET e += ${edgeValues('t')}
  REMOVE e._lock
  RETURN collect(CASE WHEN d IS NOT NULL THEN o.path END) AS applied
}
WITH project, row, [b IN row.pathsB WHERE NOT b IN applied] AS missing
WHERE size(missing) > 0
RETURN project.tenantId AS tenantId, project.projectId AS projectId, row.path AS fileA, missing`;

/**
 * The edges UPDATE_CO_ACCESSED did not find, grouped by fileA: MERGE, as a concurrent batch may
 * have created one since (then its totals move by the delta as any edge's would). `edge.d` as
 * there.
 */
export const CREATE_CO_ACCESSED = `
UNWIND $rows AS row
MATCH (a:File {tenantId: row.tenantId, projectId: row.projectId, path: row.fileA})
UNWIND row.edges AS edge
MATCH (b:File {tenantId: row.tenantId, projectId: row.projectId, path: edge.fileB})
MERGE (a)-[e:CO_ACCESSED]->(b)
SET e._lock = true
WITH e, COUNT { (a)<-[:TOUCHED]-() } + COUNT { (b)<-[:TOUCHED]-() } AS touchedEither,
     ${movedTotals('e', 'edge.d')} AS t
WITH e, t, touchedEither, coalesce(t[0], e.sessionCount) AS sessions
SET e += ${edgeValues('t')}
REMOVE e._lock`;

export const UPSERT_ERROR_HITS = `
UNWIND $rows AS row
MATCH (s:Session {id: row.sessionId})
MERGE (e:ErrorPattern {tenantId: row.tenantId, projectId: row.projectId, hash: row.hash})
  ON CREATE SET e.toolName = row.toolName, e.normalisedError = row.normalisedError
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

/**
 * `engram neighbors`' evidence (libs/core rankFileNeighbours, the same ranking as embedded):
 * the project's sessions; the files of the query file's `$sessionWindow` latest sessions, each
 * with how many of them touched it and its own session count (TOUCHED degree); the project's
 * `$popular` most-touched files that none of those sessions touched. A missing project or file gives zeros and
 * empty lists.
 */
export const NEIGHBOUR_EVIDENCE = `
OPTIONAL MATCH (p:Project {tenantId: $tenantId, projectId: $projectId})
OPTIONAL MATCH (f:File {tenantId: $tenantId, projectId: $projectId, path: $path})
CALL (p) {
  OPTIONAL MATCH (p)<-[:IN_PROJECT]-(s:Session)
  RETURN count(s) AS projectSessions
}
CALL (f) {
  OPTIONAL MATCH (f)<-[t:TOUCHED]-(s:Session)
  WITH s, t ORDER BY t.lastAt DESC, s.id
  LIMIT $sessionWindow
  OPTIONAL MATCH (s)-[:TOUCHED]->(n:File)
  WITH n, count(DISTINCT s) AS withQuery
  WHERE n IS NOT NULL
  RETURN collect({file: n.path, withQuery: withQuery, sessions: COUNT { (n)<-[:TOUCHED]-() }}) AS together
}
CALL (together) {
  MATCH (n:File {tenantId: $tenantId, projectId: $projectId})
  WHERE n.path <> $path AND NOT n.path IN [t IN together | t.file]
  WITH n, COUNT { (n)<-[:TOUCHED]-() } AS sessions
  WHERE sessions > 0
  ORDER BY sessions DESC, n.path ASC
  LIMIT $popular
  RETURN collect({file: n.path, withQuery: 0, sessions: sessions}) AS popular
}
RETURN projectSessions, together, popular`;

/** The file's CO_ACCESSED edges, all of them, with the counters the evidence needs. */
export const CO_ACCESS_EDGES_OF_FILE = `
MATCH (f:File {tenantId: $tenantId, projectId: $projectId, path: $path})-[e:CO_ACCESSED]-(n:File)
RETURN n.path AS file, e.weight AS weight, e.rawCount AS rawCount,
       e.sessionCount AS sessionCount, e.avgTimeDeltaMs AS avgTimeDeltaMs,
       e.direction AS direction, startNode(e) = f AS queriedIsA, e.lastObservedAt AS lastObservedAt,
       e.timedCount AS timedCount
ORDER BY weight DESC, rawCount DESC, file ASC`;
