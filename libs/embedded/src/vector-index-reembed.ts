import BetterSqlite3, { type Database } from 'better-sqlite3';
import { classifyStorageError } from './sqlite-event-log';
import { RETRIEVAL_STORE_TIERS, type RetrievalStoreTier } from './sqlite-retrieval-documents';
import { recordVectorChange } from './vector-index';

// `engram reindex` on the embedded store: every document of a tier whose vector is not of the
// configured model (another model, another dimension, or none) gets one of that model. Only the
// vector columns and the document's model fields change, and only if the document is still the
// one that was read (the indexer of a running `engram start` may have replaced it meanwhile:
// then its own embedding stands). Documents already of the model are never selected again, so a
// run is idempotent and an interrupted run resumes where it stopped.

/** A document to embed: its row, its stored JSON (the write's guard) and its text. */
export interface DocumentToEmbed {
  rid: number;
  tier: RetrievalStoreTier;
  tenantId: string;
  projectId: string;
  doc: string;
  text: string;
}

export interface EmbeddingModelId {
  model: string;
  dims: number;
}

/** One new vector; `doc` is the JSON that was read (unchanged since, or the write is skipped). */
export interface Reembedding {
  document: DocumentToEmbed;
  vector: Float32Array;
}

const NOT_OF_MODEL = `tier = ? AND json_extract(doc, '$.text') <> ''
  AND (embedding_model IS NULL OR embedding_model <> ? OR embedding_dims <> ?)`;

export class RetrievalReembedder {
  private readonly db: Database;

  /** On the store's file (`SqliteRetrievalStore.path`), beside whatever else has it open. */
  constructor(path: string) {
    this.db = new BetterSqlite3(path, { timeout: 10_000, fileMustExist: true });
    this.db.pragma('journal_mode = WAL');
  }

  /** Documents of the tier still to embed with the model. */
  remaining(tier: RetrievalStoreTier, target: EmbeddingModelId): number {
    return this.db
      .prepare(`SELECT count(*) FROM retrieval_documents WHERE ${NOT_OF_MODEL}`)
      .pluck()
      .get(tierOf(tier), target.model, target.dims) as number;
  }

  /** The next documents to embed after row `afterRid`, in row order. */
  next(
    tier: RetrievalStoreTier,
    target: EmbeddingModelId,
    afterRid: number,
    limit: number,
  ): DocumentToEmbed[] {
    return this.db
      .prepare(
        `SELECT rid, tier, tenant_id AS tenantId, project_id AS projectId, doc,
                json_extract(doc, '$.text') AS text
         FROM retrieval_documents WHERE ${NOT_OF_MODEL} AND rid > ? ORDER BY rid LIMIT ?`,
      )
      .all(tierOf(tier), target.model, target.dims, afterRid, limit) as DocumentToEmbed[];
  }

  /**
   * Writes the vectors in one transaction, each with the change-log entry the kNN indexes
   * replay; returns how many were written (the others changed since they were read).
   */
  write(target: EmbeddingModelId, embeddings: readonly Reembedding[]): number {
    const update = this.db.prepare(
      `UPDATE retrieval_documents
       SET embedding = ?, embedding_model = ?, embedding_dims = ?,
           doc = json_set(doc, '$.embeddingModel', ?, '$.embeddingDims', ?)
       WHERE rid = ? AND doc = ?`,
    );
    try {
      return this.db.transaction(() => {
        let written = 0;
        for (const { document: d, vector } of embeddings) {
          if (vector.length !== target.dims) {
            throw new RangeError(`the model gave ${vector.length} dimensions, not ${target.dims}`);
          }
          const blob = Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
          const { changes } = update.run(
            blob,
            target.model,
            target.dims,
            target.model,
            target.dims,
            d.rid,
            d.doc,
          );
          if (changes === 0) continue;
          recordVectorChange(this.db, d.tier, d.tenantId, d.projectId, d.rid);
          written += 1;
        }
        return written;
      })();
    } catch (error) {
      throw error instanceof RangeError ? error : classifyStorageError(error);
    }
  }

  /** The tiers and scopes that hold vectors of the model (to warm their kNN graphs). */
  scopes(
    target: EmbeddingModelId,
  ): { tier: RetrievalStoreTier; tenantId: string; projectId: string }[] {
    return this.db
      .prepare(
        `SELECT DISTINCT tier, tenant_id AS tenantId, project_id AS projectId
         FROM retrieval_documents WHERE embedding_model = ? AND embedding_dims = ?`,
      )
      .all(target.model, target.dims) as {
      tier: RetrievalStoreTier;
      tenantId: string;
      projectId: string;
    }[];
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}

function tierOf(tier: string): RetrievalStoreTier {
  if (!(RETRIEVAL_STORE_TIERS as readonly string[]).includes(tier)) {
    throw new RangeError(`"${tier}" is not a retrieval tier (${RETRIEVAL_STORE_TIERS.join(', ')})`);
  }
  return tier as RetrievalStoreTier;
}
