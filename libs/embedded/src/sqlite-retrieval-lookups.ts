import type { RecallScope, SessionActivity, StoreListQuery } from '@engram/core';
import type { Database } from 'better-sqlite3';
import { sourceOf, type DocumentRow, type RetrievalStoreTier } from './sqlite-retrieval-documents';
import { compileFilter } from './sqlite-retrieval-filter';

// The embedded retrieval store's reads beside the candidate searches: episodes of turns, recent
// sessions, tenants of a project, listings (SqliteRetrievalStore answers the port with them).

/**
 * The episodes each turn (by eventId) belongs to, from the episodes' `sourceEventIds`, in
 * episode start order — what the Elasticsearch store answers.
 */
export function episodesOfTurns(
  db: Database,
  scope: RecallScope,
  eventIds: string[],
): Map<string, string[]> {
  const byTurn = new Map<string, string[]>();
  if (eventIds.length === 0) return byTurn;
  const rows = db
    .prepare(
      `SELECT d.id AS episodeId, e.value AS eventId
       FROM retrieval_documents d, json_each(d.doc, '$.sourceEventIds') e
       WHERE d.tier = 'episodes' AND d.tenant_id = ? AND d.project_id = ?
         AND e.value IN (SELECT value FROM json_each(?))
       ORDER BY json_extract(d.doc, '$.startedAt'), d.id`,
    )
    .all(scope.tenantId, scope.projectId, JSON.stringify(eventIds)) as {
    episodeId: string;
    eventId: string;
  }[];
  for (const row of rows) {
    byTurn.set(row.eventId, [...(byTurn.get(row.eventId) ?? []), row.episodeId]);
  }
  return byTurn;
}

/** The `n` most recently active sessions of a project (user turns and episodes). */
export function recentSessions(db: Database, scope: RecallScope, n: number): SessionActivity[] {
  const rows = db
    .prepare(
      `SELECT session_id AS sessionId, max(activity_at) AS lastActivityAt
       FROM retrieval_documents
       WHERE tenant_id = ? AND project_id = ? AND tier IN ('turns', 'episodes')
         AND session_id IS NOT NULL
       GROUP BY session_id ORDER BY lastActivityAt DESC, session_id LIMIT ?`,
    )
    .all(scope.tenantId, scope.projectId, n) as SessionActivity[];
  return rows.map((r) => ({ ...r, lastActivityAt: r.lastActivityAt ?? 0 }));
}

/** The tenants that have documents of a project (a CLI without --tenant takes the only one). */
export function tenantsWithProject(db: Database, projectId: string): string[] {
  const tenants = db
    .prepare(
      'SELECT DISTINCT tenant_id FROM retrieval_documents WHERE project_id = ? ORDER BY 1 LIMIT 10',
    )
    .pluck()
    .all(projectId) as string[];
  return tenants;
}

/**
 * The documents of a tier matching the scope and filter (`compileFilter`), newest
 * `timestamp` first (ties: eventId, then id — Elasticsearch's listing order), at most `size`.
 */
export function listDocuments<S>(
  db: Database,
  tier: RetrievalStoreTier,
  query: StoreListQuery,
): { id: string; source: S }[] {
  const filter = compileFilter(query.scope, query.filter);
  const rows = db
    .prepare(
      `SELECT d.rid, d.id, d.doc, d.embedding, d.embedding_model FROM retrieval_documents d
       WHERE d.tier = ? AND ${filter.sql}
       ORDER BY d.activity_at DESC NULLS LAST, json_extract(d.doc, '$.eventId'), d.id LIMIT ?`,
    )
    .all(tier, ...filter.params, Math.max(0, query.size)) as DocumentRow[];
  return rows.map((row) => ({ id: row.id, source: sourceOf(row) as S }));
}
