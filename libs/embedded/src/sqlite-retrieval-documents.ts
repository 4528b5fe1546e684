import { MisconfigurationError } from '@engram/core';
import { FTS_TOKENIZER } from './lexical-index';
import { blobVector } from './vector-index-exact';

// How the embedded retrieval store keeps its documents: the tables, a document's row (its JSON
// with the vector beside it as a blob) and the way back to the document the indexer wrote.

export const RETRIEVAL_STORE_TIERS = ['memories', 'episodes', 'turns'] as const;
export type RetrievalStoreTier = (typeof RETRIEVAL_STORE_TIERS)[number];

/** The fields of a retrieval document the store reads (SearchFields plus the envelope). */
export interface StoredFields {
  text?: unknown;
  tenantId?: unknown;
  projectId?: unknown;
  sessionId?: unknown;
  timestamp?: unknown;
  embedding?: unknown;
  embeddingModel?: unknown;
  embeddingDims?: unknown;
  accessCount?: unknown;
  lastAccessedAt?: unknown;
}

export const SCHEMA = `
CREATE TABLE IF NOT EXISTS retrieval_documents (
  rid INTEGER PRIMARY KEY, tier TEXT NOT NULL, id TEXT NOT NULL,
  tenant_id TEXT NOT NULL, project_id TEXT NOT NULL, session_id TEXT, activity_at INTEGER,
  doc TEXT NOT NULL, embedding BLOB, embedding_model TEXT, embedding_dims INTEGER,
  UNIQUE (tier, id)
);
CREATE INDEX IF NOT EXISTS retrieval_documents_vectors
  ON retrieval_documents (tier, tenant_id, project_id, embedding_model, embedding_dims);
CREATE INDEX IF NOT EXISTS retrieval_documents_sessions
  ON retrieval_documents (tenant_id, project_id, session_id, activity_at);
-- The review queue (ListForReview, SessionStart's count): the few memories flagged needsReview,
-- without reading every document of the project. The predicate is flagSql's, to the letter.
CREATE INDEX IF NOT EXISTS retrieval_documents_review
  ON retrieval_documents (tier, tenant_id, project_id, activity_at)
  WHERE json_extract(doc, '$.needsReview') = 1;
${RETRIEVAL_STORE_TIERS.map(
  // Contentless: the text is in the document already; contentless_delete lets upserts replace it.
  (tier) => `CREATE VIRTUAL TABLE IF NOT EXISTS ${ftsTable(tier)} USING fts5(
  text, tokenize = '${FTS_TOKENIZER}', content = '', contentless_delete = 1);`,
).join('\n')}
`;

export function ftsTable(tier: RetrievalStoreTier): string {
  return `retrieval_text_${tier}`;
}

function vectorBlob(vector: readonly number[]): Buffer {
  const floats = Float32Array.from(vector);
  return Buffer.from(floats.buffer, floats.byteOffset, floats.byteLength);
}

export interface DocumentRow {
  rid: number;
  id: string;
  doc: string;
  embedding: Buffer | null;
  embedding_model: string | null;
}

export const SOURCES_OF = `
SELECT rid, id, doc, embedding, embedding_model FROM retrieval_documents
WHERE rid IN (SELECT value FROM json_each(?))`;

/** kNN hits: their cosine came with them, so their vectors are not read (nor allocated). */
export const SOURCES_WITHOUT_VECTORS_OF = `
SELECT rid, id, doc, NULL AS embedding, NULL AS embedding_model FROM retrieval_documents
WHERE rid IN (SELECT value FROM json_each(?))`;

export function tierOf(index: string): RetrievalStoreTier {
  if ((RETRIEVAL_STORE_TIERS as readonly string[]).includes(index)) {
    return index as RetrievalStoreTier;
  }
  throw new MisconfigurationError(
    `"${index}" is not a retrieval tier (${RETRIEVAL_STORE_TIERS.join(', ')})`,
  );
}

function requiredString(value: unknown, field: string): string {
  if (typeof value !== 'string' || value === '') {
    throw new MisconfigurationError(`a retrieval document needs ${field}`, { field });
  }
  return value;
}

/**
 * A memory's next version (a rename, a feedback, a re-promotion) keeps the access counts the
 * store has counted since the version before: the counters are the store's, as Elasticsearch
 * keeps them apart (`engram-memory-access`); a deleted memory's go with it.
 */
export function keptAccess(
  document: StoredFields,
  stored: { access_count: number | null; last_accessed_at: number | null },
): StoredFields {
  const count = typeof document.accessCount === 'number' ? document.accessCount : 0;
  const at = typeof document.lastAccessedAt === 'number' ? document.lastAccessedAt : 0;
  return {
    ...document,
    accessCount: Math.max(count, stored.access_count ?? 0),
    lastAccessedAt: Math.max(at, stored.last_accessed_at ?? 0),
  };
}

/** The row of a document: its JSON without the vector, which goes beside it as a blob. */
export function documentRow(tier: RetrievalStoreTier, id: string, document: StoredFields) {
  const vector = Array.isArray(document.embedding) ? (document.embedding as number[]) : null;
  const model = typeof document.embeddingModel === 'string' ? document.embeddingModel : null;
  const withVector = vector !== null && vector.length > 0 && model !== null;
  return {
    tier,
    id,
    tenantId: requiredString(document.tenantId, 'tenantId'),
    projectId: requiredString(document.projectId, 'projectId'),
    sessionId: typeof document.sessionId === 'string' ? document.sessionId : null,
    activityAt: typeof document.timestamp === 'number' ? document.timestamp : null,
    text: typeof document.text === 'string' ? document.text : '',
    // The vector goes beside the JSON (the packed copy Elasticsearch keeps is not needed here).
    doc: JSON.stringify({ ...document, embedding: null, embeddingPacked: undefined }),
    embedding: withVector ? vectorBlob(vector) : null,
    embeddingModel: withVector ? model : null,
    embeddingDims: withVector ? vector.length : null,
  };
}

/** The stored document as the indexer wrote it, its vector (if read) back in `embedding`. */
export function sourceOf(row: DocumentRow): object {
  const doc = JSON.parse(row.doc) as Record<string, unknown>;
  if (row.embedding && row.embedding_model) {
    // A loop, not Array.from: the iterator protocol costs ~15 µs per 384-d vector.
    const vector = blobVector(row.embedding);
    const embedding = new Array<number>(vector.length);
    for (let i = 0; i < vector.length; i += 1) embedding[i] = vector[i];
    doc.embedding = embedding;
  }
  return doc;
}
