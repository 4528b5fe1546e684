import { errors, type Client } from '@elastic/elasticsearch';
import type { MappingTypeMapping } from '@elastic/elasticsearch/lib/api/types';
import { errorMessage, MisconfigurationError } from '@engram/core';
import { ensureIndex, type IndexDefinition } from './index-setup';
import {
  RETRIEVAL_TIERS,
  TEXT_ANALYZER,
  memoryAccessIndexDefinition,
  retrievalIndexDefinition,
  type ElasticsearchIndexNames,
  type RetrievalIndexOptions,
  type RetrievalTier,
} from './retrieval-indices';
import { toolCallIndexDefinition } from './retrieval-tool-calls';

/** Above the built-in templates (100), so nothing else shapes these indices. */
export const RETRIEVAL_TEMPLATE_PRIORITY = 200;

export type IndexSetupOutcome = Record<RetrievalTier | 'memoryAccess', 'created' | 'exists'>;

/**
 * Puts an index template per tier and creates the index, both idempotently (safe at every start,
 * from several instances at once: a template PUT with the same body changes nothing, a concurrent
 * index creation is success). The template matches the exact index name: if the index is deleted
 * while the indexer runs, the next bulk write auto-creates it with the right mapping instead of a
 * dynamic one (where `embedding` would silently become an array of floats).
 *
 * An existing index is checked, then brought up to date additively: an index whose vectors have
 * another dimension, or whose `text` is not English-analysed, stops start-up (`engram reindex`
 * rebuilds it); fields a newer contract added are put into its mapping (the mapping is strict, so
 * without them every new document would be refused); a field whose type changed stops start-up.
 */
export async function ensureRetrievalIndices(
  client: Client,
  names: ElasticsearchIndexNames,
  options: RetrievalIndexOptions,
): Promise<IndexSetupOutcome> {
  const outcome = {} as IndexSetupOutcome;
  for (const tier of RETRIEVAL_TIERS) {
    const index = names[tier];
    // Refuse an incompatible index before touching its template.
    const assertFits = async () =>
      assertCompatible(index, await client.indices.getMapping({ index }), options.dims);
    outcome[tier] = await ensureManagedIndex(
      client,
      index,
      tier,
      retrievalIndexDefinition(tier, options),
      assertFits,
    );
  }
  outcome.memoryAccess = await ensureMemoryAccessIndex(client, names.memoryAccess, options);
  return outcome;
}

/**
 * The access-counter index and its template, idempotently. The recall side calls it too before
 * its first counter write: a recall server may run before any indexer of this version did, and a
 * counter written into a missing index would create it with a dynamic mapping.
 */
export function ensureMemoryAccessIndex(
  client: Client,
  index: string,
  options: Pick<RetrievalIndexOptions, 'shards'> = {},
): Promise<'created' | 'exists'> {
  return ensureManagedIndex(
    client,
    index,
    'memory-access',
    memoryAccessIndexDefinition(options),
    () => Promise.resolve(),
  );
}

/**
 * The tool-call index of distributed mode (retrieval-tool-calls.ts) and its template,
 * idempotently: the indexer ensures it at start, the friction tests before replaying.
 */
export function ensureToolCallIndex(
  client: Client,
  index: string,
  options: { shards?: number } = {},
): Promise<'created' | 'exists'> {
  return ensureManagedIndex(client, index, 'tool-calls', toolCallIndexDefinition(options), () =>
    Promise.resolve(),
  );
}

/** One index and its exact-name template, checked by `assertFits` before and after. */
async function ensureManagedIndex(
  client: Client,
  index: string,
  tier: string,
  definition: IndexDefinition,
  assertFits: () => Promise<void>,
): Promise<'created' | 'exists'> {
  if (await client.indices.exists({ index })) await assertFits();
  await client.indices.putIndexTemplate({
    name: index,
    index_patterns: [index],
    priority: RETRIEVAL_TEMPLATE_PRIORITY,
    template: { settings: definition.settings, mappings: definition.mappings },
    _meta: { managedBy: 'engram-retrieval', tier },
  });
  const outcome = await ensureIndex(client, index, definition);
  if (outcome === 'exists') {
    // Another instance may have created it a moment ago: check again, then add new fields.
    await assertFits();
    await addNewFields(client, index, definition.mappings!);
  }
  return outcome;
}

async function addNewFields(
  client: Client,
  index: string,
  mappings: MappingTypeMapping,
): Promise<void> {
  try {
    await client.indices.putMapping({
      index,
      dynamic: mappings.dynamic,
      _meta: mappings._meta,
      properties: mappings.properties,
    });
  } catch (error) {
    if (error instanceof errors.ResponseError && error.statusCode === 400) {
      throw new MisconfigurationError(
        `index ${index} has a mapping this version cannot extend: ${errorMessage(error)} (fix: run engram reindex, or use another index prefix)`,
        { index },
        { cause: error },
      );
    }
    throw error;
  }
}

interface FieldMapping {
  type?: string;
  dims?: number;
  analyzer?: string;
}

function assertCompatible(index: string, response: unknown, dims: number): void {
  const mappings = Object.values(response as Record<string, { mappings?: unknown }>)[0]
    ?.mappings as { properties?: Record<string, FieldMapping> } | undefined;
  const embedding = mappings?.properties?.embedding;
  const text = mappings?.properties?.text;
  const problems: string[] = [];
  if (embedding?.type !== 'dense_vector' || embedding.dims !== dims) {
    problems.push(
      `embedding is ${embedding?.type ?? 'missing'}${embedding?.dims ? `/${embedding.dims}` : ''}, expected dense_vector/${dims}`,
    );
  }
  if (text?.type !== 'text' || text.analyzer !== TEXT_ANALYZER) {
    problems.push(
      `text is ${text?.type ?? 'missing'}/${text?.analyzer ?? 'standard'}, expected text/${TEXT_ANALYZER}`,
    );
  }
  if (problems.length > 0) {
    throw new MisconfigurationError(
      `index ${index} does not fit the configured embedder: ${problems.join('; ')} (fix: run engram reindex, or use another index prefix)`,
      { index, problems },
    );
  }
}
