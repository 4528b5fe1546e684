import type { Client } from '@elastic/elasticsearch';
import type { IdleMergePolicy } from '@engram/core';
import {
  AccessCounterMirror,
  BulkWriter,
  createElasticsearchClient,
  DEFAULT_BULK_LIMITS,
  elasticsearchStoreWriter,
  elasticsearchToolCallWriter,
  ensureRetrievalIndices,
  ensureToolCallIndex,
  IdleMerger,
  retrievalIndexNames,
  toolCallIndexName,
  type BulkLimits,
  type ElasticsearchIndexNames,
  type IndexSetupOutcome,
} from '@engram/elasticsearch';
import { elasticsearchRecallStore } from './recall-store';
import type { RetrievalBackend } from './retrieval-backend';

// The Elasticsearch backend of distributed mode, and what the indexer and the recall server open
// (and close) around it.

export interface ElasticsearchBackendOptions {
  /** Bulk request limits of the writes (default DEFAULT_BULK_LIMITS). */
  bulk?: BulkLimits;
  /** Access counters held in memory (a long-running server's); absent: read each time. */
  counters?: AccessCounterMirror | null;
  /** The tool-call index the indexer writes (absent: tool calls are not kept). */
  toolCallIndex?: string;
}

/** The three indices of `client` (and their access counters); the client stays the caller's. */
export function elasticsearchBackend(
  client: Client,
  indices: ElasticsearchIndexNames,
  options: ElasticsearchBackendOptions = {},
): RetrievalBackend {
  const writer = BulkWriter.forClient(client, options.bulk ?? DEFAULT_BULK_LIMITS);
  return {
    store: elasticsearchRecallStore(client, indices, { counters: options.counters ?? null }),
    writer: elasticsearchStoreWriter(writer, indices),
    toolCalls:
      options.toolCallIndex === undefined
        ? null
        : elasticsearchToolCallWriter(writer, options.toolCallIndex),
    refresh: () => client.indices.refresh({ index: indices.memories }),
    description: [
      ...Object.values(indices),
      ...(options.toolCallIndex ? [options.toolCallIndex] : []),
    ].join(', '),
  };
}

/** A backend with what was opened for it, closed by `close`. */
export interface OpenedBackend {
  backend: RetrievalBackend;
  close(): Promise<void>;
}

export interface ElasticsearchIndexingOptions {
  elasticsearchUrl: string;
  /** Prefix of the index names (lowercased), as ENGRAM_TOPIC_PREFIX; default none. */
  indexPrefix?: string;
  /** The embedder's dimension, mapped in the indices (0: no vectors). */
  dims: number;
  bulk?: BulkLimits;
  /** Merging each quiet index to one segment (faster kNN); false: never (default: on). */
  idleMerge?: IdleMergePolicy | false;
  log?: (line: string) => void;
}

export interface ElasticsearchIndexing extends OpenedBackend {
  client: Client;
  indices: ElasticsearchIndexNames;
  /** The tool-call index (the friction report's reads). */
  toolCallIndex: string;
  setup: IndexSetupOutcome;
  /** null when idle merging is off. */
  merger: IdleMerger | null;
}

/**
 * What the distributed indexer writes into: the indices and the tool-call index in place
 * (idempotent), and the idle merger running; `close` stops it and closes the client.
 */
export async function openElasticsearchIndexing(
  options: ElasticsearchIndexingOptions,
): Promise<ElasticsearchIndexing> {
  const indices = retrievalIndexNames(options.indexPrefix ?? '');
  const toolCallIndex = toolCallIndexName(options.indexPrefix ?? '');
  const client = createElasticsearchClient(options.elasticsearchUrl);
  try {
    const setup = await ensureRetrievalIndices(client, indices, { dims: options.dims });
    await ensureToolCallIndex(client, toolCallIndex);
    const merger =
      options.idleMerge === false
        ? null
        : new IdleMerger(client, Object.values(indices), {
            ...(options.idleMerge && { policy: options.idleMerge }),
            ...(options.log && { log: options.log }),
          });
    merger?.start();
    return {
      backend: elasticsearchBackend(client, indices, {
        toolCallIndex,
        ...(options.bulk && { bulk: options.bulk }),
      }),
      client,
      indices,
      toolCallIndex,
      setup,
      merger,
      async close() {
        merger?.stop();
        await client.close();
      },
    };
  } catch (error) {
    await client.close().catch(() => undefined);
    throw error;
  }
}

export interface ElasticsearchRecall extends OpenedBackend {
  client: Client;
  indices: ElasticsearchIndexNames;
}

/**
 * What the distributed recall server reads: the indices of `indexPrefix`, with the access
 * counters mirrored in memory (loading in the background: until it has read every counter,
 * recalls read them from Elasticsearch); `close` stops the mirror and closes the client.
 */
export function openElasticsearchRecall(options: {
  elasticsearchUrl: string;
  indexPrefix?: string;
  warn: (message: string) => void;
}): ElasticsearchRecall {
  const indices = retrievalIndexNames(options.indexPrefix ?? '');
  const client = createElasticsearchClient(options.elasticsearchUrl);
  const counters = new AccessCounterMirror(client, indices.memoryAccess, {
    onError: options.warn,
  });
  void counters.start();
  return {
    backend: elasticsearchBackend(client, indices, { counters }),
    client,
    indices,
    async close() {
      await counters.close();
      await client.close().catch(() => undefined);
    },
  };
}
