import { PAIR_COUNTERS, type GraphSessionPairRow, type PairEdgeDelta } from '@engram/core';
import type { GraphFileRef, ObserverGraphBatch } from './observer-graph.types';

// The rows of one observer graph batch as the writer's statements take them: sorted in lock
// order, each node once, and the CO_ACCESSED work grouped by project and file. Pure: no driver.

/** Every kind of row of a batch, in lock order (see sortedGraphRows). */
export interface SortedGraphRows {
  projects: { tenantId: string; projectId: string }[];
  sessions: (ObserverGraphBatch['sessions'][number] & { withFacts: boolean })[];
  /** Sessions rows name without a session row of their own (bare MERGE, as before). */
  otherSessions: { sessionId: string; tenantId: string; projectId: string }[];
  /** The touched files, each once (with their module). */
  files: { tenantId: string; projectId: string; path: string; module: string }[];
  filePaths: ReadonlySet<string>;
  touches: ObserverGraphBatch['touches'];
  pairs: GraphSessionPairRow[];
  newlyTouched: readonly GraphFileRef[];
  errors: ObserverGraphBatch['errors'];
  patterns: { tenantId: string; projectId: string; hash: string }[];
}

/** Every kind of row in lock order, so concurrent writers take their locks in the same order. */
export function sortedGraphRows(batch: ObserverGraphBatch): SortedGraphRows {
  const byScope = (a: { tenantId: string; projectId: string }, b: typeof a) =>
    compare(a.tenantId, b.tenantId) || compare(a.projectId, b.projectId);
  const errors = [...batch.errors].sort(
    (a, b) => byScope(a, b) || compare(a.hash, b.hash) || compare(a.sessionId, b.sessionId),
  );
  const pairs = [...batch.sessionPairs].sort(
    (a, b) =>
      compare(a.sessionId, b.sessionId) ||
      byScope(a, b) ||
      compare(a.fileA, b.fileA) ||
      compare(a.fileB, b.fileB),
  );
  const pairSessions = new Set(pairs.map((p) => p.sessionId));
  const sessions = [...batch.sessions]
    .sort((a, b) => compare(a.sessionId, b.sessionId))
    .map((s) => ({ ...s, withFacts: pairSessions.has(s.sessionId) }));
  const listed = new Set(sessions.map((s) => s.sessionId));
  const otherSessions = uniqueBy(
    [...batch.touches, ...pairs, ...batch.errors]
      .filter((r) => !listed.has(r.sessionId))
      .map(({ sessionId, tenantId, projectId }) => ({ sessionId, tenantId, projectId }))
      .sort((a, b) => compare(a.sessionId, b.sessionId)),
    (s) => [s.sessionId],
  );
  const touches = [...batch.touches].sort(
    (a, b) => byScope(a, b) || compare(a.path, b.path) || compare(a.sessionId, b.sessionId),
  );
  const files = uniqueBy(touches, (t) => [t.tenantId, t.projectId, t.path]).map(
    ({ tenantId, projectId, path, module }) => ({ tenantId, projectId, path, module }),
  );
  return {
    projects: uniqueBy(
      sessions.map(({ tenantId, projectId }) => ({ tenantId, projectId })).sort(byScope),
      (p) => [p.tenantId, p.projectId],
    ),
    sessions,
    otherSessions,
    files,
    filePaths: new Set(files.map((f) => scopeKey(f.tenantId, f.projectId, f.path))),
    touches,
    pairs,
    newlyTouched: batch.newlyTouchedFiles,
    errors,
    patterns: uniqueBy(errors, (e) => [e.tenantId, e.projectId, e.hash]).map(
      ({ tenantId, projectId, hash }) => ({ tenantId, projectId, hash }),
    ),
  };
}

/** One file's row of UPDATE_CO_ACCESSED (see there). */
interface EdgeFileRow {
  path: string;
  touched: boolean;
  pathsB: string[];
  deltas: Record<string, number[]>;
}

/**
 * The parameters of UPDATE_CO_ACCESSED: per project, the files that are fileA of a delta or
 * newly touched, sorted, with their deltas by fileB; and the files pairs name that no touch
 * created (MERGE_FILES, without a module, as a pair alone always created them).
 */
export function coAccessEdgeWork(
  deltas: readonly PairEdgeDelta[],
  newlyTouched: readonly GraphFileRef[],
  filePaths: ReadonlySet<string>,
) {
  const projects = new Map<
    string,
    {
      tenantId: string;
      projectId: string;
      files: Map<string, EdgeFileRow>;
      state: Record<string, number>;
    }
  >();
  const fileRow = (tenantId: string, projectId: string, path: string) => {
    const key = scopeKey(tenantId, projectId, '');
    let project = projects.get(key);
    if (!project) {
      project = { tenantId, projectId, files: new Map(), state: {} };
      projects.set(key, project);
    }
    let row = project.files.get(path);
    if (!row) {
      row = { path, touched: false, pathsB: [], deltas: {} };
      project.files.set(path, row);
      project.state[path] = 1;
    }
    return { project, row };
  };
  const byFile = new Map<string, Record<string, number[]>>();
  const newFiles = new Map<string, { tenantId: string; projectId: string; path: string }>();
  for (const delta of deltas) {
    const { tenantId, projectId, fileA, fileB } = delta;
    const { row } = fileRow(tenantId, projectId, fileA);
    row.pathsB.push(fileB);
    row.deltas[fileB] = [
      delta.newSessions,
      ...PAIR_COUNTERS.map((c) => delta.counters[c]),
      delta.lastObservedAt,
    ];
    byFile.set(scopeKey(tenantId, projectId, fileA), row.deltas);
    for (const path of [fileA, fileB]) {
      const key = scopeKey(tenantId, projectId, path);
      if (!filePaths.has(key)) newFiles.set(key, { tenantId, projectId, path });
    }
  }
  for (const { tenantId, projectId, path } of newlyTouched) {
    const { project, row } = fileRow(tenantId, projectId, path);
    row.touched = true;
    project.state[path] = 2;
  }
  const sortedProjects = [...projects.values()]
    .sort((a, b) => compare(a.tenantId, b.tenantId) || compare(a.projectId, b.projectId))
    .map(({ tenantId, projectId, files, state }) => ({
      tenantId,
      projectId,
      state,
      files: [...files.values()].sort((a, b) => compare(a.path, b.path)),
    }));
  return {
    projects: sortedProjects,
    deltas: byFile,
    newFiles: [...newFiles.values()]
      .sort(
        (a, b) =>
          compare(a.tenantId, b.tenantId) ||
          compare(a.projectId, b.projectId) ||
          compare(a.path, b.path),
      )
      .map((f) => ({ ...f, module: null })),
  };
}

/** Touches (sorted by file, then session) grouped by file, for UPSERT_TOUCHES. */
export function touchesByFile(touches: readonly ObserverGraphBatch['touches'][number][]) {
  const files: { tenantId: string; projectId: string; path: string; touches: object[] }[] = [];
  let last: (typeof files)[number] | undefined;
  for (const {
    tenantId,
    projectId,
    path,
    sessionId,
    reads,
    edits,
    accesses,
    firstAt,
    lastAt,
  } of touches) {
    if (!last || last.tenantId !== tenantId || last.projectId !== projectId || last.path !== path) {
      last = { tenantId, projectId, path, touches: [] };
      files.push(last);
    }
    last.touches.push({ sessionId, reads, edits, accesses, firstAt, lastAt });
  }
  return files;
}

export function scopeKey(tenantId: string, projectId: string, path: string): string {
  return `${tenantId}\u0000${projectId}\u0000${path}`;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The first of each key, order kept (the input is sorted by key). */
function uniqueBy<T>(items: readonly T[], key: (item: T) => string[]): T[] {
  const seen = new Set<string>();
  return items.filter((item) => {
    const k = JSON.stringify(key(item));
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
