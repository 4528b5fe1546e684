import type { Episode, Memory, PromptSubmitted } from '@engram/contracts';
import { InvalidEventError } from '../errors/engram-error';
import { redactSecrets } from '../redaction/redact-secrets';
import { promptContentProblem } from '../segmentation/prompt-validation';
import { DEFAULT_SEGMENTER_SETTINGS } from '../segmentation/segmenter-settings';
import type { ModelVector } from './model-vector';
import { episodeProvenance, memoryProvenance, type Provenance } from './provenance';

// Pure mapping from contract records to the documents of the three retrieval tiers, the same in
// both stores (Elasticsearch indices, the SQLite retrieval store). Documents
// depend on nothing but the record and the embedding: replaying a topic rebuilds the same
// documents under the same `_id`s (memoryId, episodeId, eventId).

/** The vector beside every document, with the model that made it (a query never mixes models). */
export interface EmbeddingFields {
  /** The vector as numbers, for the index (`dense_vector`); not kept in the stored `_source`. */
  embedding: number[] | null;
  /** The same vector as base64 float32 (packVector): what `_source` keeps and searches return. */
  embeddingPacked: string | null;
  embeddingModel: string | null;
  embeddingDims: number | null;
}

export interface SearchFields extends EmbeddingFields {
  /** What BM25 searches (English-analysed) and what the embedding was computed from. */
  text: string;
  provenance: Provenance;
}

/** A Memory, field for field, with the index's vector in `embedding`/`embeddingModel`. */
export type MemoryDocument = Omit<Memory, 'embedding' | 'embeddingModel'> & SearchFields;
export type EpisodeDocument = Episode & SearchFields;
/** A user prompt; `text` is the contract field, redacted again before it is stored. */
export type TurnDocument = PromptSubmitted & SearchFields;

export interface RetrievalDocument<D extends SearchFields> {
  /** The explicit `_id`: a write is an idempotent upsert. */
  id: string;
  body: D;
}

/** Elasticsearch refuses longer ids — for the whole bulk request, so they are caught here. */
export const MAX_DOCUMENT_ID_BYTES = 512;

const NO_EMBEDDING: EmbeddingFields = {
  embedding: null,
  embeddingPacked: null,
  embeddingModel: null,
  embeddingDims: null,
};

/**
 * The record without the `type` tag contract codecs add (`{ type: 'Memory', ...fields }`, see
 * `Typed` in @engram/contracts): it is the Avro record name, not a field, and the strict mapping
 * would refuse it.
 */
function untagged<R extends object>(record: R): R {
  if (!('type' in record)) return record;
  const { type: _tag, ...fields } = record as R & { type: unknown };
  return fields as R;
}

export function documentId(id: string, field: string): string {
  if (id.trim() === '') throw new InvalidEventError(`${field} must not be empty`, { field });
  const bytes = Buffer.byteLength(id);
  if (bytes > MAX_DOCUMENT_ID_BYTES) {
    throw new InvalidEventError(
      `${field} is ${bytes} bytes; a document id is at most ${MAX_DOCUMENT_ID_BYTES}`,
      { field, bytes },
    );
  }
  return id;
}

/** Non-empty parts, trimmed, one per line. */
function joinText(parts: ReadonlyArray<string | null | undefined>): string {
  return parts
    .map((part) => part?.trim() ?? '')
    .filter((part) => part !== '')
    .join('\n');
}

/**
 * The searchable text of a memory: its content, plus the words of its type-specific details that
 * say what it is about (a dead end's approach and why it failed, a recipe's task and steps).
 */
export function memoryText(memory: Memory): string {
  const deadEnd = memory.deadEnd;
  const recipe = memory.workflowRecipe;
  return joinText([
    memory.content,
    deadEnd?.approachTried,
    deadEnd?.whyItFailed,
    deadEnd?.alternativeUsed,
    recipe?.taskPattern,
    ...(recipe?.steps ?? []).map((step) => step.description),
  ]);
}

export function memoryDocument(memory: Memory): RetrievalDocument<MemoryDocument> {
  const { embedding: _vector, embeddingModel: _model, ...record } = untagged(memory);
  return {
    id: documentId(memory.memoryId, 'memoryId'),
    body: {
      ...record,
      text: memoryText(memory),
      provenance: memoryProvenance(memory),
      ...NO_EMBEDDING,
    },
  };
}

/** Intent, keywords, summary, hot files and key decisions (the episode's "what and where"). */
export function episodeText(episode: Episode): string {
  return joinText([
    episode.intent,
    episode.intentKeywords.join(' '),
    episode.summary,
    episode.hotFiles.map((file) => file.path).join(' '),
    ...episode.keyDecisions,
  ]);
}

export function episodeDocument(episode: Episode): RetrievalDocument<EpisodeDocument> {
  return {
    id: documentId(episode.episodeId, 'episodeId'),
    body: {
      ...untagged(episode),
      text: episodeText(episode),
      provenance: episodeProvenance(episode),
      ...NO_EMBEDDING,
    },
  };
}

/**
 * Only what the user typed is a turn: agent and system prompts are not indexed. Nor is a prompt
 * the segmenter dead-letters on its content (a 10 MB turn, an impossible promptId): the same rule
 * (promptContentProblem), so what a stage upstream rejected never becomes recallable.
 */
export function isIndexedTurn(prompt: PromptSubmitted): boolean {
  // TODO(issue 18): the indexer should take config.segmenter.settings (the segmenter's limits)
  // through RetrievalIndexer; until then the default limit, named here.
  return (
    prompt.source === 'user' && promptContentProblem(prompt, DEFAULT_SEGMENTER_SETTINGS) === null
  );
}

/**
 * A user prompt as a turn, or null for agent and system prompts. The producer redacts already;
 * redacting again (idempotent) means a producer that forgot cannot put a secret in the index.
 */
export function turnDocument(prompt: PromptSubmitted): RetrievalDocument<TurnDocument> | null {
  if (!isIndexedTurn(prompt)) return null;
  return {
    id: documentId(prompt.eventId, 'eventId'),
    body: {
      ...untagged(prompt),
      text: redactSecrets(prompt.text).text,
      provenance: {
        tenantId: prompt.tenantId,
        projectId: prompt.projectId,
        sessionIds: [prompt.sessionId],
        // A prompt does not know its episode: the segmenter decides that later, and the episode
        // (episodes index) names its prompt range — the query side joins on session + promptId.
        episodeIds: [],
        promptIds: [prompt.promptId],
        eventIds: [prompt.eventId],
        memoryId: null,
        commitSha: null,
      },
      ...NO_EMBEDDING,
    },
  };
}

/**
 * A vector as JSON numbers: 9 significant digits identify a float32 exactly, so the index stores
 * the same value at about half the bytes of a double's shortest form. Deterministic.
 */
export function vectorToJson(vector: ArrayLike<number>): number[] {
  return Array.from(vector, (value) => Number(value.toPrecision(9)));
}

/** The document with its vector and model; null (no text, or no vector) leaves it without one. */
export function withEmbedding<D extends SearchFields>(body: D, vector: ModelVector | null): D {
  if (vector === null || !hasMagnitude(vector.vector)) return { ...body, ...NO_EMBEDDING };
  return { ...body, ...embeddingFields(vector) };
}

/** The vector fields of a document (or of a partial update that replaces its vector). */
export function embeddingFields(vector: ModelVector): EmbeddingFields {
  return {
    embedding: vectorToJson(vector.vector),
    embeddingPacked: packVector(vector.vector),
    embeddingModel: vector.model,
    embeddingDims: vector.dimension,
  };
}

/**
 * A vector as base64 of its float32 values, little-endian: 2 KB for 384 dimensions where the
 * JSON numbers take ~5 KB, and a string costs next to nothing to parse. The index keeps this in
 * `_source` instead of the numbers (the mapping excludes `embedding` from it), so a search that
 * returns vectors — BM25 hits, for the core's exact cosine — sends and parses far less, and one
 * that does not need them filters them out of a smaller source. The same float32 values the
 * index holds: `vectorToJson`'s 9 digits identify a float32 exactly.
 */
export function packVector(vector: ArrayLike<number>): string {
  const bytes = Buffer.alloc(vector.length * 4);
  for (let i = 0; i < vector.length; i += 1) bytes.writeFloatLE(vector[i], i * 4);
  return bytes.toString('base64');
}

export function unpackVector(packed: string): number[] {
  const bytes = Buffer.from(packed, 'base64');
  if (bytes.length % 4 !== 0) {
    throw new RangeError(`a packed vector has ${bytes.length} bytes, not a multiple of 4`);
  }
  const vector = new Array<number>(bytes.length / 4);
  for (let i = 0; i < vector.length; i += 1) vector[i] = bytes.readFloatLE(i * 4);
  return vector;
}

/**
 * A stored `_source` as the query side reads it: the packed vector back in `embedding`. A
 * document without `embeddingPacked` (written by an older version, or a search that excluded
 * it) is returned as it is.
 */
export function withUnpackedVector<S>(source: S): S {
  const { embeddingPacked: packed, ...rest } = source as S & { embeddingPacked?: unknown };
  if (packed === undefined) return source;
  return { ...rest, embedding: typeof packed === 'string' ? unpackVector(packed) : null } as S;
}

/** Cosine similarity is undefined for the zero vector, and Elasticsearch refuses it. */
function hasMagnitude(vector: ArrayLike<number>): boolean {
  for (let i = 0; i < vector.length; i += 1) if (vector[i] !== 0) return true;
  return false;
}
