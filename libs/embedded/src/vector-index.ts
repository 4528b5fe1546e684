import type { ModelVector, RecallScope } from '@engram/core';
import type { Database } from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { AnnIndex, type AnnScope } from './vector-index-ann';
import {
  blobVector,
  exactSearch,
  vectorSetOf,
  type VectorNeighbour,
  type VectorSet,
} from './vector-index-exact';

export type { VectorNeighbour } from './vector-index-exact';

// kNN of the embedded retrieval store. SQLite holds every vector (with its model and dimension)
// and is the only truth; what is kept here is rebuildable: an exact matrix for small scopes, a
// usearch HNSW graph in `<dataDir>/vector-index/` for large ones. Every write of a vector appends
// its row id to a change log in the same SQLite transaction, so any process (the `engram start`
// indexer writing, an `engram recall` reading) brings what it holds up to date by replaying the
// log after the position it reflects — after a crash too, whatever file survived.

export interface VectorIndexOptions {
  /** Scopes with at least this many vectors are searched by the ANN graph; default 5,000. */
  annMinVectors?: number;
  /**
   * A search asking for more neighbours than this (a selective filter, after over-fetching)
   * falls back to the exact scan; default 1,024.
   */
  annMaxCandidates?: number;
  /** Changes applied to a graph before its file is rewritten; default 1,000 (and at close). */
  saveEvery?: number;
}

export const DEFAULT_VECTOR_INDEX_OPTIONS: Required<VectorIndexOptions> = {
  annMinVectors: 5_000,
  annMaxCandidates: 1_024,
  saveEvery: 1_000,
};

/** The nearest neighbours of one query in one scope, asked for in growing numbers. */
export interface VectorSearch {
  /** The `count` nearest with a cosine of at least `min`, best first. */
  top(count: number, min: number): VectorNeighbour[];
  /** How the last `top` was answered. */
  readonly mode: 'exact' | 'ann';
}

const CHANGE_LOG = `
CREATE TABLE IF NOT EXISTS retrieval_vector_changes (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  tier TEXT NOT NULL, tenant_id TEXT NOT NULL, project_id TEXT NOT NULL, rid INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS retrieval_vector_changes_scope
  ON retrieval_vector_changes (tier, tenant_id, project_id, seq);
CREATE TABLE IF NOT EXISTS retrieval_vector_identity (id TEXT NOT NULL);
`;

/**
 * A random id of this database, made once: graph files are keyed by it, so a graph of a deleted
 * or replaced `retrieval.db` (whose row ids and log positions mean other things) is never used.
 */
function storeIdentity(db: Database): string {
  return db
    .transaction(() => {
      const row = db.prepare('SELECT id FROM retrieval_vector_identity').get() as
        { id: string } | undefined;
      if (row) return row.id;
      const id = randomUUID();
      db.prepare('INSERT INTO retrieval_vector_identity (id) VALUES (?)').run(id);
      return id;
    })
    .immediate();
}

/** Appends a row's vector change to the log, in the caller's transaction. */
export function recordVectorChange(
  db: Database,
  tier: string,
  tenantId: string,
  projectId: string,
  rid: number,
): void {
  db.prepare(
    'INSERT INTO retrieval_vector_changes (tier, tenant_id, project_id, rid) VALUES (?, ?, ?, ?)',
  ).run(tier, tenantId, projectId, rid);
}

/** What is held for one tier, scope and model. */
interface ScopeVectors {
  scope: AnnScope;
  /** The change-log position the exact matrix reflects (it is reloaded when behind). */
  exactSeq: number;
  exact: VectorSet | null;
  ann: AnnIndex | null;
  /** Whether a graph file was looked for (once: the directory is not listed on every query). */
  annLooked: boolean;
}

interface VectorRow {
  rid: number;
  id: string;
  embedding: Buffer;
}

export class VectorIndexes {
  private readonly options: Required<VectorIndexOptions>;
  private readonly held = new Map<string, ScopeVectors>();
  readonly dir: string;
  private readonly identity: string;

  constructor(
    private readonly db: Database,
    dataDir: string,
    options: VectorIndexOptions = {},
  ) {
    this.options = { ...DEFAULT_VECTOR_INDEX_OPTIONS, ...options };
    this.dir = join(dataDir, 'vector-index');
    db.exec(CHANGE_LOG);
    this.identity = storeIdentity(db);
  }

  /** Records that the vector of row `rid` in this scope changed; call inside the write. */
  changed(tier: string, tenantId: string, projectId: string, rid: number): void {
    recordVectorChange(this.db, tier, tenantId, projectId, rid);
  }

  /** A search of the scope's vectors of the query's model (never another model's). */
  search(tier: string, scope: RecallScope, vector: ModelVector): VectorSearch {
    const held = this.upToDate({
      store: this.identity,
      tier,
      ...scope,
      model: vector.model,
      dims: vector.dimension,
    });
    const query = Float32Array.from(vector.vector);
    let mode: 'exact' | 'ann' = 'exact';
    let exact: ((count: number, min: number) => VectorNeighbour[]) | null = null;
    return {
      top: (count, min) => {
        const ann = held.ann;
        if (ann && count <= this.options.annMaxCandidates) {
          mode = 'ann';
          return this.withIds(ann.search(query, count)).filter((n) => n.cosine >= min);
        }
        mode = 'exact';
        exact ??= exactSearch(this.exactSet(held), query);
        return exact(count, min);
      },
      get mode() {
        return mode;
      },
    };
  }

  /**
   * Brings the scope's kNN state up to date now (a graph built or replayed), so that the first
   * recall does not pay for it; returns how it will be searched.
   */
  warm(tier: string, scope: RecallScope, model: string, dims: number): 'exact' | 'ann' {
    const held = this.upToDate({ store: this.identity, tier, ...scope, model, dims });
    return held.ann ? 'ann' : 'exact';
  }

  /** The scope brought up to the change log's head: ANN graph or exact matrix, as its size says. */
  private upToDate(scope: AnnScope): ScopeVectors {
    const key = JSON.stringify(scope);
    let held = this.held.get(key);
    if (!held) {
      held = { scope, exactSeq: -1, exact: null, ann: null, annLooked: false };
      this.held.set(key, held);
    }
    const head = this.head(scope);
    if (held.ann && held.ann.seq < head) this.catchUpOrDrop(held, head);
    // An infinite threshold means exact only, even where another process left a graph file.
    if (!held.ann && !held.annLooked && Number.isFinite(this.options.annMinVectors)) {
      held.annLooked = true;
      held.ann = this.openAnn(scope, head);
    }
    if (!held.ann && held.exactSeq < head) this.loadExact(held);
    if (!held.ann && (held.exact?.rids.length ?? 0) >= this.options.annMinVectors) {
      this.buildAnn(held);
    }
    return held;
  }

  /** A graph that cannot be brought up to date (its file vanished under it) is rebuilt. */
  private catchUpOrDrop(held: ScopeVectors, head: number): void {
    try {
      this.catchUp(held.ann as AnnIndex, head);
    } catch {
      held.ann?.discard();
      held.ann = null;
      held.exactSeq = -1;
    }
  }

  /**
   * The scope's graph file brought up to `head`, or null (none, or one ahead of the log: a file
   * of another `retrieval.db` that was deleted or restored — never trusted, rebuilt).
   */
  private openAnn(scope: AnnScope, head: number): AnnIndex | null {
    const ann = AnnIndex.open(scope, this.dir);
    if (ann && ann.seq > head) {
      ann.discard();
      return null;
    }
    if (!ann || ann.seq === head) return ann;
    const held = { scope, exactSeq: -1, exact: null, ann, annLooked: true };
    this.catchUpOrDrop(held, head);
    return held.ann;
  }

  /** The exact matrix, for the fallback of a large scope (loaded on first need, kept current). */
  private exactSet(held: ScopeVectors): VectorSet {
    const head = held.ann?.seq ?? this.head(held.scope);
    if (!held.exact || held.exactSeq < head) this.loadExact(held);
    return held.exact as VectorSet;
  }

  private head(scope: AnnScope): number {
    const row = this.db
      .prepare(
        `SELECT max(seq) AS seq FROM retrieval_vector_changes
         WHERE tier = ? AND tenant_id = ? AND project_id = ?`,
      )
      .get(scope.tier, scope.tenantId, scope.projectId) as { seq: number | null };
    return row.seq ?? 0;
  }

  /** Rows and head read in one transaction: the matrix is exactly the state at `seq`. */
  private snapshot(scope: AnnScope): { seq: number; rows: VectorRow[] } {
    return this.db.transaction(() => ({
      seq: this.head(scope),
      rows: this.db
        .prepare(
          `SELECT rid, id, embedding FROM retrieval_documents
           WHERE tier = ? AND tenant_id = ? AND project_id = ? AND embedding_model = ?
             AND embedding_dims = ? AND embedding IS NOT NULL ORDER BY rid`,
        )
        .all(scope.tier, scope.tenantId, scope.projectId, scope.model, scope.dims) as VectorRow[],
    }))();
  }

  private loadExact(held: ScopeVectors): void {
    const { seq, rows } = this.snapshot(held.scope);
    held.exact = vectorSetOf(rows, held.scope.dims);
    held.exactSeq = seq;
  }

  private buildAnn(held: ScopeVectors): void {
    const set = held.exact as VectorSet;
    held.ann = AnnIndex.build(held.scope, this.dir, held.exactSeq, set.rids, set.matrix);
    // The graph holds the vectors now; the matrix comes back only for an exact fallback.
    held.exact = null;
    held.exactSeq = -1;
  }

  /**
   * Replays the log after the graph's position: every row named there is re-read from SQLite
   * (its current vector if it is still of this scope and model, else removed), so a replay is
   * idempotent and an older file plus the log equals the current state.
   */
  private catchUp(ann: AnnIndex, head: number): void {
    const { scope } = ann;
    const rows = this.db
      .prepare(
        `SELECT DISTINCT c.rid AS rid, d.embedding AS embedding
         FROM retrieval_vector_changes c
         LEFT JOIN retrieval_documents d ON d.rid = c.rid AND d.tier = c.tier
           AND d.tenant_id = c.tenant_id AND d.project_id = c.project_id
           AND d.embedding_model = ? AND d.embedding_dims = ?
         WHERE c.tier = ? AND c.tenant_id = ? AND c.project_id = ? AND c.seq > ? AND c.seq <= ?`,
      )
      .all(scope.model, scope.dims, scope.tier, scope.tenantId, scope.projectId, ann.seq, head) as {
      rid: number;
      embedding: Buffer | null;
    }[];
    const present = rows.filter((row) => row.embedding !== null);
    const matrix = new Float32Array(present.length * scope.dims);
    present.forEach((row, i) => matrix.set(blobVector(row.embedding as Buffer), i * scope.dims));
    ann.apply(
      head,
      rows.filter((row) => row.embedding === null).map((row) => row.rid),
      { rids: present.map((row) => row.rid), matrix },
    );
    ann.saveIfDue(this.options.saveEvery);
  }

  private withIds(hits: { rid: number; cosine: number }[]): VectorNeighbour[] {
    if (hits.length === 0) return [];
    const ids = new Map(
      (
        this.db
          .prepare(
            'SELECT rid, id FROM retrieval_documents WHERE rid IN (SELECT value FROM json_each(?))',
          )
          .all(JSON.stringify(hits.map((hit) => hit.rid))) as { rid: number; id: string }[]
      ).map((row) => [row.rid, row.id]),
    );
    // A rid without a row was deleted by another process after the graph's position.
    return hits.flatMap((hit) => {
      const id = ids.get(hit.rid);
      return id === undefined ? [] : [{ ...hit, id }];
    });
  }

  /** What is held, per scope (benchmarks, `engram reindex`). */
  describe(): { scope: AnnScope; mode: 'exact' | 'ann'; vectors: number; fileBytes: number }[] {
    return [...this.held.values()].map((held) => ({
      scope: held.scope,
      mode: held.ann ? 'ann' : 'exact',
      vectors: held.ann?.size ?? held.exact?.rids.length ?? 0,
      fileBytes: held.ann?.fileBytes() ?? 0,
    }));
  }

  /** Writes the graphs' unsaved changes (the log would replay them; this saves the replay). */
  close(): void {
    for (const held of this.held.values()) held.ann?.saveIfDue(Infinity, true);
    this.held.clear();
  }
}
