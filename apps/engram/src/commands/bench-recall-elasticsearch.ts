import type { Client } from '@elastic/elasticsearch';
import { DEFAULT_IDLE_MERGE_POLICY, modelVector } from '@engram/core';
import {
  BulkWriter,
  mergeToOneSegment,
  type BulkOperation,
  type RetrievalIndexNames,
} from '@engram/elasticsearch';
import { memoryDocument, withEmbedding } from '@engram/core';
import { progressBar } from '../progress';
import { MODEL, type RecallCorpus } from './bench-recall-corpus';
import type { DistributedRecallSizeBench } from './bench-recall-distributed-report';

// The Elasticsearch side of `engram bench recall --distributed`: the corpus bulk-written into
// the bench's indices and merged as the indexer leaves them, the node's uptime, the clean-up.

/** Memories per bulk write call (the writer splits it into requests of ≤ 500 operations). */
const INDEX_BATCH = 2_000;

/** The longest wait for background merges before measuring. */
const MERGE_WAIT_MS = 300_000;

async function indexStats(client: Client, index: string) {
  const stats = await client.indices.stats({
    index,
    metric: ['segments', 'store', 'docs', 'merge'],
  });
  return stats._all.primaries;
}

/** Writes the corpus through the bulk writer as the indexer writes memories, then refreshes. */
export async function indexCorpus(
  client: Client,
  index: string,
  corpus: RecallCorpus,
  progress: boolean,
): Promise<DistributedRecallSizeBench['indexing']> {
  const writer = BulkWriter.forClient(client);
  const bar = progressBar(`indexing into ${index}`, { unit: 'memories', enabled: progress });
  bar.total(corpus.memories.length);
  let bulkRequests = 0;
  const started = performance.now();
  try {
    for (let i = 0; i < corpus.memories.length; i += INDEX_BATCH) {
      const batch = corpus.memories.slice(i, i + INDEX_BATCH);
      const operations = batch.map(({ memory, vector }): BulkOperation => {
        const { id, body } = memoryDocument(memory);
        const document = withEmbedding(body, modelVector(MODEL, Array.from(vector)));
        return { action: 'index', index, id, document };
      });
      bulkRequests += (await writer.write(operations)).requests;
      bar.advance(batch.length);
    }
  } finally {
    bar.stop();
  }
  const bulkSeconds = (performance.now() - started) / 1000;
  const refreshStarted = performance.now();
  await client.indices.refresh({ index });
  const refreshSeconds = (performance.now() - refreshStarted) / 1000;
  // Background merges after a bulk load compete with the queries for the two cores: the
  // measurement starts when they are done (or after MERGE_WAIT_MS), like a steady-state index.
  const mergeStarted = performance.now();
  let primaries = await indexStats(client, index);
  while (
    (primaries?.merges?.current ?? 0) > 0 &&
    performance.now() - mergeStarted < MERGE_WAIT_MS
  ) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    primaries = await indexStats(client, index);
  }
  const mergeWaitSeconds = (performance.now() - mergeStarted) / 1000;
  // What the running indexer does once the index has been quiet (IdleMerger): the queries then
  // meet the index a read-mostly memory store has most of the day.
  const segmentsAsLoaded = primaries?.segments?.count ?? 0;
  const idleMergeStarted = performance.now();
  if (segmentsAsLoaded > DEFAULT_IDLE_MERGE_POLICY.maxSegments) {
    await mergeToOneSegment(client, index);
    primaries = await indexStats(client, index);
  }
  const idleMergeSeconds = (performance.now() - idleMergeStarted) / 1000;
  if (primaries?.docs?.count !== corpus.memories.length) {
    throw new Error(
      `bench: ${index} holds ${primaries?.docs?.count} documents after the refresh, not ${corpus.memories.length}`,
    );
  }
  return {
    bulkSeconds: Number(bulkSeconds.toFixed(1)),
    refreshSeconds: Number(refreshSeconds.toFixed(1)),
    docsPerSecond: Math.round(corpus.memories.length / (bulkSeconds + refreshSeconds)),
    bulkRequests,
    mergeWaitSeconds: Number(mergeWaitSeconds.toFixed(1)),
    segmentsAsLoaded,
    idleMergeSeconds: Number(idleMergeSeconds.toFixed(1)),
    segments: primaries.segments?.count ?? 0,
    storeMb: Number(((primaries.store?.size_in_bytes ?? 0) / 2 ** 20).toFixed(1)),
  };
}

/** Minutes since the (longest-running) Elasticsearch node started: a fresh JVM is still warming. */
export async function nodeUptimeMinutes(client: Client): Promise<number> {
  const stats = await client.nodes.stats({ metric: 'jvm' });
  const uptimes = Object.values(stats.nodes).map((node) => node.jvm?.uptime_in_millis ?? 0);
  return Math.round(Math.max(0, ...uptimes) / 60_000);
}

/** Deletes the bench's indices and their templates (missing ones are fine). */
export async function deleteBenchIndices(
  client: Client,
  indices: RetrievalIndexNames,
): Promise<void> {
  const names = Object.values(indices);
  await client.indices.delete({ index: names, ignore_unavailable: true });
  for (const name of names) {
    await client.indices.deleteIndexTemplate({ name }, { ignore: [404] });
  }
}
