import { applyAccessUpdate, type AccessUpdate } from '@engram/core';
import type { Database } from 'better-sqlite3';
import { classifyStorageError } from './sqlite-event-log';

/**
 * accessCount + n and lastAccessedAt = max, with the core's rule, in one transaction. A memory
 * that is gone, or of another scope, is skipped; SQLite serialises writers, so nothing is lost
 * to a concurrent write and nothing comes back to retry.
 */
export function writeAccessCounts(db: Database, updates: AccessUpdate[]): void {
  const read = db.prepare(
    `SELECT rid, tenant_id AS tenantId, project_id AS projectId,
            json_extract(doc, '$.accessCount') AS accessCount,
            json_extract(doc, '$.lastAccessedAt') AS lastAccessedAt
     FROM retrieval_documents WHERE tier = 'memories' AND id = ?`,
  );
  const update = db.prepare(
    `UPDATE retrieval_documents
     SET doc = json_set(doc, '$.accessCount', ?, '$.lastAccessedAt', ?) WHERE rid = ?`,
  );
  try {
    db.transaction(() => {
      for (const u of updates) {
        const stored = read.get(u.memoryId) as StoredCounters | undefined;
        if (!stored || stored.tenantId !== u.tenantId || stored.projectId !== u.projectId) {
          continue;
        }
        const next = applyAccessUpdate(
          { accessCount: stored.accessCount ?? 0, lastAccessedAt: stored.lastAccessedAt ?? 0 },
          u,
        );
        update.run(next.accessCount, next.lastAccessedAt, stored.rid);
      }
    })();
  } catch (error) {
    throw classifyStorageError(error);
  }
}

interface StoredCounters {
  rid: number;
  tenantId: string;
  projectId: string;
  accessCount: number | null;
  lastAccessedAt: number | null;
}
