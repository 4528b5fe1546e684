import type {
  IndicesIndexSettings,
  MappingProperty,
  MappingTypeMapping,
} from '@elastic/elasticsearch/lib/api/types';
import { MisconfigurationError } from '@engram/core';
import type { IndexDefinition } from './index-setup';

// The three searchable tiers of SPEC §7, one index each. Every document holds its contract record
// field for field (same names, same values, so the query side can rebuild a Memory, Episode or
// PromptSubmitted from `_source`), plus what search needs: `text` (English-analysed, BM25),
// `embedding` with `embeddingModel` and `embeddingDims` beside it, and `provenance`.

export const RETRIEVAL_TIERS = ['memories', 'episodes', 'turns'] as const;
export type RetrievalTier = (typeof RETRIEVAL_TIERS)[number];

export const RETRIEVAL_INDEX_BASE_NAMES: Readonly<Record<RetrievalTier, string>> = {
  memories: 'engram-memories',
  episodes: 'engram-episodes',
  turns: 'engram-turns',
};

/** Where the distributed store counts accesses to memories (see memoryAccessMapping). */
export const MEMORY_ACCESS_INDEX_BASE_NAME = 'engram-memory-access';

export type RetrievalIndexNames = Readonly<Record<RetrievalTier, string>> & {
  /**
   * The memories' access counters, kept apart from the memory documents. Absent where the store
   * keeps them in the memory itself (the SQLite store of embedded mode).
   */
  readonly memoryAccess?: string;
};

/** The index names of the Elasticsearch store: the three tiers and the access counters. */
export type ElasticsearchIndexNames = RetrievalIndexNames & { readonly memoryAccess: string };

/** Indexed (kNN) but left out of the stored `_source`, which keeps it packed instead. */
const VECTOR_SOURCE_EXCLUDED = 'embedding';

/** Bumped when a mapping changes incompatibly (a new version means `engram reindex`). */
export const RETRIEVAL_MAPPING_VERSION = 1;

/** Analyzer of every `text` field; the local build provides it through EngramCompatPlugin. */
export const TEXT_ANALYZER = 'english';

/** Keywords longer than this are kept in `_source` but not indexed (free-form lists only). */
export const FREE_KEYWORD_MAX_LENGTH = 1024;

const INDEX_NAME = /^[a-z0-9][a-z0-9._-]*$/;
const MAX_INDEX_NAME_BYTES = 255;

/**
 * The tiers' index names under a prefix (tests, and several installations on one cluster; the
 * service passes ENGRAM_TOPIC_PREFIX). Elasticsearch index names are lowercase, so the prefix is
 * lowercased; a prefix that still makes an invalid name is refused with the rule in the message.
 */
export function retrievalIndexNames(prefix = ''): ElasticsearchIndexNames {
  const lower = prefix.toLowerCase();
  const names: ElasticsearchIndexNames = {
    ...(Object.fromEntries(
      RETRIEVAL_TIERS.map((tier) => [tier, `${lower}${RETRIEVAL_INDEX_BASE_NAMES[tier]}`]),
    ) as Record<RetrievalTier, string>),
    memoryAccess: `${lower}${MEMORY_ACCESS_INDEX_BASE_NAME}`,
  };
  for (const name of Object.values(names)) {
    if (!INDEX_NAME.test(name) || Buffer.byteLength(name) > MAX_INDEX_NAME_BYTES) {
      throw new MisconfigurationError(
        `index prefix "${prefix}" makes the invalid index name "${name}": use lowercase letters, digits, ".", "_" and "-", starting with a letter or digit`,
        { prefix, name },
      );
    }
  }
  return names;
}

// ---- field types ----

const keyword: MappingProperty = { type: 'keyword' };
/** Free-form values (paths, tags): an absurdly long one must not reject the whole document. */
export const freeKeyword: MappingProperty = {
  type: 'keyword',
  ignore_above: FREE_KEYWORD_MAX_LENGTH,
};
/** Kept for the reader in `_source`; neither searched nor aggregated. */
const storedText: MappingProperty = { type: 'text', index: false };
const englishText: MappingProperty = { type: 'text', analyzer: TEXT_ANALYZER };
const date: MappingProperty = { type: 'date' };
const long: MappingProperty = { type: 'long' };
const integer: MappingProperty = { type: 'integer' };
const float: MappingProperty = { type: 'float' };
const boolean: MappingProperty = { type: 'boolean' };
/** Type-specific details: returned whole, never queried. */
const opaque: MappingProperty = { type: 'object', enabled: false };

/** The event envelope's fields, as every document keeping one maps them. */
export const ENVELOPE_PROPERTIES: Record<string, MappingProperty> = {
  eventId: keyword,
  tenantId: keyword,
  projectId: keyword,
  sessionId: keyword,
  agentId: keyword,
  userId: keyword,
  timestamp: date,
  schemaVersion: integer,
};

const WORK_UNIT_REF: MappingProperty = {
  properties: { methodology: keyword, hierarchy: freeKeyword, label: freeKeyword },
};

/** Where a document came from (SPEC §7): the Provenance of @engram/core, field for field. */
const PROVENANCE: MappingProperty = {
  properties: {
    tenantId: keyword,
    projectId: keyword,
    sessionIds: keyword,
    episodeIds: keyword,
    promptIds: long,
    eventIds: keyword,
    memoryId: keyword,
    commitSha: keyword,
  },
};

function searchFields(dims: number): Record<string, MappingProperty> {
  return {
    text: englishText,
    // The vector as `_source` keeps it (packVector); `embedding` below is indexed, not stored.
    embeddingPacked: { type: 'binary' },
    // Full-precision HNSW (not the int8_hnsw default of 8.14+): vectors come back for exact cosine.
    embedding: {
      type: 'dense_vector',
      dims,
      index: true,
      similarity: 'cosine',
      index_options: { type: 'hnsw', m: 16, ef_construction: 100 },
    },
    embeddingModel: keyword,
    embeddingDims: integer,
    provenance: PROVENANCE,
  };
}

function memoryProperties(): Record<string, MappingProperty> {
  return {
    ...ENVELOPE_PROPERTIES,
    memoryId: keyword,
    memoryType: keyword,
    content: storedText,
    confidence: float,
    tags: freeKeyword,
    relatedFiles: freeKeyword,
    relatedModules: freeKeyword,
    createdAt: date,
    lastAccessedAt: date,
    accessCount: long,
    workUnitRef: WORK_UNIT_REF,
    scope: keyword,
    source: keyword,
    episodeId: keyword,
    commitSha: keyword,
    provenanceSessionIds: keyword,
    sourceEventIds: keyword,
    targetNodeId: freeKeyword,
    relations: {
      properties: {
        targetMemoryId: keyword,
        targetFilePath: freeKeyword,
        relationType: keyword,
        confidence: float,
        autoExtracted: boolean,
      },
    },
    decayHalfLifeDays: float,
    needsReview: boolean,
    userVerified: boolean,
    citationText: storedText,
    staleAt: date,
    workState: opaque,
    e2eObservation: opaque,
    deadEnd: opaque,
    workUnitOutcome: opaque,
    workflowRecipe: opaque,
    contextCost: opaque,
    prefetchPattern: opaque,
    taskCalibration: opaque,
  };
}

function episodeProperties(): Record<string, MappingProperty> {
  return {
    ...ENVELOPE_PROPERTIES,
    episodeId: keyword,
    threadId: keyword,
    firstPromptId: long,
    lastPromptId: long,
    startedAt: date,
    endedAt: date,
    closeReason: keyword,
    intentKeywords: freeKeyword,
    intent: storedText,
    obsCount: integer,
    investigate: integer,
    execute: integer,
    failures: integer,
    hotFiles: { properties: { path: freeKeyword, touches: integer } },
    durationMs: long,
    toolsUsed: freeKeyword,
    participants: freeKeyword,
    entities: freeKeyword,
    outcome: keyword,
    tags: freeKeyword,
    keyDecisions: storedText,
    parentEpisodeId: keyword,
    crossThreadEpisodeIds: keyword,
    summary: storedText,
    workUnitRef: WORK_UNIT_REF,
    sourceEventIds: keyword,
  };
}

function turnProperties(): Record<string, MappingProperty> {
  return {
    ...ENVELOPE_PROPERTIES,
    promptId: long,
    source: keyword,
    channel: keyword,
    channelKind: keyword,
    explicitThreadId: keyword,
    // `text` (the redacted prompt) is the contract field and the searched field at once.
    methodology: keyword,
    methodologyPhase: keyword,
    workUnitRef: WORK_UNIT_REF,
    parentEpisodeId: keyword,
  };
}

const PROPERTIES: Record<RetrievalTier, () => Record<string, MappingProperty>> = {
  memories: memoryProperties,
  episodes: episodeProperties,
  turns: turnProperties,
};

export interface RetrievalIndexOptions {
  /** Dimension of the configured embedder's vectors (the dense_vector `dims`). */
  dims: number;
  /** Primary shards (default 1: the tiers are small per tenant; raise it for big clusters). */
  shards?: number;
}

/** Index settings: one replica where there is a second node, none on a single node (green). */
export function retrievalIndexSettings({
  shards = 1,
}: { shards?: number } = {}): IndicesIndexSettings {
  return { number_of_shards: shards, auto_expand_replicas: '0-1' };
}

/**
 * The mapping of a tier. `dynamic: strict`: a field the mapping does not know is a bug in the
 * document builders, and is refused (and dead-lettered) rather than guessed.
 */
export function retrievalMapping(tier: RetrievalTier, dims: number): MappingTypeMapping {
  if (!Number.isInteger(dims) || dims < 1 || dims > 4096) {
    throw new MisconfigurationError(`embedding dimension ${dims} is not in 1..4096`, { dims });
  }
  return {
    dynamic: 'strict',
    // The vector is stored once, packed (embeddingPacked): searches return 2 KB of base64 per hit
    // instead of ~5 KB of JSON numbers. A consequence: a partial update of a document must carry
    // its vector (embeddingFields), or the document is re-indexed without one.
    _source: { excludes: [VECTOR_SOURCE_EXCLUDED] },
    _meta: { engram: { tier, mappingVersion: RETRIEVAL_MAPPING_VERSION, embeddingDims: dims } },
    properties: { ...PROPERTIES[tier](), ...searchFields(dims) },
  };
}

/**
 * The access counters of memories, one small document per memory ever returned (`_id` = the
 * memoryId). They live apart from the memory documents because Lucene cannot update a field in
 * place: a counter written into a memory document re-indexes the whole document, its 384-d vector
 * into the HNSW graph included — measured on 100k memories, that write-back doubled recall
 * latency (issue #5). A counter document costs a few hundred bytes to rewrite.
 */
export function memoryAccessMapping(): MappingTypeMapping {
  return {
    dynamic: 'strict',
    _meta: { engram: { tier: 'memory-access', mappingVersion: RETRIEVAL_MAPPING_VERSION } },
    properties: {
      tenantId: keyword,
      projectId: keyword,
      memoryId: keyword,
      accessCount: long,
      lastAccessedAt: date,
    },
  };
}

export function memoryAccessIndexDefinition(
  options: Pick<RetrievalIndexOptions, 'shards'> = {},
): IndexDefinition {
  return { settings: retrievalIndexSettings(options), mappings: memoryAccessMapping() };
}

export function retrievalIndexDefinition(
  tier: RetrievalTier,
  options: RetrievalIndexOptions,
): IndexDefinition {
  return {
    settings: retrievalIndexSettings(options),
    mappings: retrievalMapping(tier, options.dims),
  };
}
